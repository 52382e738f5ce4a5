import {
	readAttributeListDeclaration,
	readElementDeclaration,
	readNotationDeclaration,
} from './doctypeDeclarations';
import { readEntityDeclaration } from './doctypeEntities';
import type { DoctypeResult } from './doctypeModel';
import { DoctypeProblem, DoctypeReader, MAX_NESTING } from './doctypeReader';

/**
 * Reads a whole DOCTYPE (from '<!DOCTYPE' to its '>') and checks it against XML 1.0's grammar
 * for the internal subset and its well-formedness constraints. Internal parameter entities
 * referenced between declarations are read as declarations; nothing external is fetched.
 */
export function readDoctype(text: string, standalone: boolean): DoctypeResult {
	const reader = new DoctypeReader(text, standalone);
	try {
		readDoctypeText(reader);
	} catch (error) {
		// The reader throws nothing but DoctypeProblem: the first problem ends the reading.
		const { message, offset } = error as DoctypeProblem;
		return { problem: { message, offset: offset ?? 0 } };
	}
	return {
		doctype: {
			entities: reader.entities,
			undeclaredAllowed: reader.undeclaredAllowed,
			defaults: reader.defaults,
		},
	};
}

/** '<!DOCTYPE', the root element's name, an external ID, the internal subset in '[]', '>'. */
function readDoctypeText(r: DoctypeReader): void {
	r.expect('<!DOCTYPE', "'<!DOCTYPE'");
	r.requireSpace("after 'DOCTYPE'");
	r.readName('the name of the root element');
	const spaced = r.skipSpace();
	if (r.at('SYSTEM') || r.at('PUBLIC')) {
		if (!spaced) r.unexpected("a space before 'SYSTEM' or 'PUBLIC'");
		r.readExternalId(false);
		if (!r.standalone) r.undeclaredAllowed = true;
		r.skipSpace();
	}
	if (r.at('[')) {
		r.pos++;
		readSubset(r);
		r.expect(']', "']' to end the internal subset");
		r.skipSpace();
	}
	r.expect('>', "'>' to end the DOCTYPE");
}

/** Declarations, comments, processing instructions and parameter entity references. */
function readSubset(r: DoctypeReader): void {
	for (;;) {
		r.skipSpace();
		if (r.pos >= r.text.length || r.at(']]>') || (r.at(']') && !r.inParameterEntity)) return;
		if (r.at('%')) readParameterEntityReference(r);
		else if (r.at('<!--')) readComment(r);
		else if (r.at('<?')) readProcessingInstruction(r);
		else if (r.at('<![')) readConditionalSection(r);
		else if (r.at('<!')) readDeclaration(r);
		else r.unexpected('a declaration');
	}
}

const DECLARATIONS = ['ELEMENT', 'ATTLIST', 'ENTITY', 'NOTATION'];

/** '<!' and a keyword: the declaration it starts, up to its '>'. */
function readDeclaration(r: DoctypeReader): void {
	r.pos += 2;
	const keyword = DECLARATIONS.find((candidate) => r.at(candidate));
	if (!keyword) r.unexpected('ELEMENT, ATTLIST, ENTITY or NOTATION');
	r.pos += keyword.length;
	if (r.inParameterEntity && hasParameterReferenceBefore(r, '>')) {
		// Inside a parameter entity's text, a declaration may be built from further parameter
		// entities: not checked here, and what it declares is not known.
		skipDeclaration(r);
		if (!r.standalone) r.undeclaredAllowed = true;
		return;
	}
	r.requireSpace(`after '${keyword}'`);
	if (keyword === 'ELEMENT') readElementDeclaration(r);
	else if (keyword === 'ATTLIST') readAttributeListDeclaration(r);
	else if (keyword === 'ENTITY') readEntityDeclaration(r);
	else readNotationDeclaration(r);
	r.skipSpace();
	if (!r.at('>')) r.unexpected(`'>' to end the ${keyword} declaration`);
	r.pos++;
}

/** Whether a '%' occurs outside quotes before the next `end` outside quotes. */
function hasParameterReferenceBefore(r: DoctypeReader, end: string): boolean {
	let quote = '';
	for (let k = r.pos; k < r.text.length; k++) {
		const c = r.text[k];
		if (quote) {
			if (c === quote) quote = '';
		} else if (c === '"' || c === "'") {
			quote = c;
		} else if (c === end) {
			return false;
		} else if (c === '%') {
			return true;
		}
	}
	return false;
}

/** Passes over a declaration up to its '>' outside quotes. */
function skipDeclaration(r: DoctypeReader): void {
	let quote = '';
	while (r.pos < r.text.length) {
		const c = r.text[r.pos++];
		if (quote) {
			if (c === quote) quote = '';
		} else if (c === '"' || c === "'") {
			quote = c;
		} else if (c === '>') {
			return;
		}
	}
	r.fail('A declaration is not closed');
}

function readComment(r: DoctypeReader): void {
	const start = r.pos;
	const end = r.text.indexOf('--', start + 4);
	if (end < 0) r.fail('A comment is not closed', start);
	if (r.text[end + 2] !== '>') r.fail("'--' is not allowed inside a comment", end);
	r.pos = end + 3;
}

function readProcessingInstruction(r: DoctypeReader): void {
	const start = r.pos;
	r.pos += 2;
	const target = r.readName('a processing instruction target');
	if (target.toLowerCase() === 'xml') {
		r.fail(
			target === 'xml'
				? 'The XML declaration is only allowed at the very start of the document'
				: `The processing instruction target '${target}' is reserved`,
			start,
		);
	}
	if (!r.at('?>')) r.requireSpace('after the processing instruction target');
	const end = r.text.indexOf('?>', r.pos);
	if (end < 0) r.fail('A processing instruction is not closed', start);
	r.pos = end + 2;
}

function readConditionalSection(r: DoctypeReader): void {
	if (!r.inParameterEntity) r.fail('Conditional sections are only allowed in the external subset');
	r.pos += 3;
	r.skipSpace();
	if (r.at('INCLUDE')) {
		r.pos += 7;
		r.skipSpace();
		r.expect('[', "'['");
		readSubset(r);
		r.expect(']]>', "']]>'");
		return;
	}
	r.expect('IGNORE', "'INCLUDE' or 'IGNORE'");
	r.skipSpace();
	r.expect('[', "'['");
	for (let depth = 1; depth > 0; ) {
		const open = r.text.indexOf('<![', r.pos);
		const close = r.text.indexOf(']]>', r.pos);
		if (close < 0) r.fail('A conditional section is not closed');
		if (open >= 0 && open < close) {
			depth++;
			r.pos = open + 3;
		} else {
			depth--;
			r.pos = close + 3;
		}
	}
}

/** '%name;' between declarations: the entity's replacement text is read as declarations in its place. */
function readParameterEntityReference(r: DoctypeReader): void {
	const start = r.pos;
	r.pos++;
	const name = r.readName('a parameter entity name');
	r.expect(';', "';' to end the parameter entity reference");
	// Once a parameter entity is referenced, an undeclared general entity is a validity
	// problem, not a well-formedness one (unless the document is standalone).
	if (!r.standalone) r.undeclaredAllowed = true;
	const value = r.parameterEntities.get(name);
	if (value === undefined || value === null) return;
	if (r.nesting >= MAX_NESTING)
		r.fail(`Parameter entities are nested more than ${MAX_NESTING} deep`, start);
	const saved = {
		text: r.text,
		pos: r.pos,
		inParameterEntity: r.inParameterEntity,
		referenceOffset: r.referenceOffset,
	};
	if (!r.inParameterEntity) r.referenceOffset = start;
	r.text = value;
	r.pos = 0;
	r.inParameterEntity = true;
	r.nesting++;
	readSubset(r);
	if (r.pos < r.text.length) r.unexpected('a declaration');
	r.nesting--;
	Object.assign(r, saved);
}
