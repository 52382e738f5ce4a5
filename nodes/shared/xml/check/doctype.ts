import { isNameChar, isNameStart, isSpace, isXmlName } from '../chars';
import { characterReference, isPredefinedEntity } from './entities';

/** A general entity declared in the DOCTYPE. */
export interface EntityDeclaration {
	/** Replacement text of an internal entity; null when not known (external ones are never read). */
	value: string | null;
	external: boolean;
	/** An unparsed entity (NDATA): never referenced in text or attribute values. */
	unparsed: boolean;
}

export interface Doctype {
	entities: Map<string, EntityDeclaration>;
	/**
	 * Whether a reference to an undeclared entity is allowed: the DTD has an external subset or a
	 * parameter entity reference, which this check never reads, and the document is not standalone.
	 */
	undeclaredAllowed: boolean;
	/** Default attribute values, checked against the entities once the whole DTD is known. */
	defaults: Array<{ value: string; offset: number }>;
}

export type DoctypeResult = { doctype: Doctype } | { problem: { message: string; offset: number } };

class DoctypeProblem extends Error {
	constructor(
		message: string,
		readonly offset: number,
	) {
		super(message);
	}
}

const MAX_NESTING = 64;
const PUBID_CHARS = /^[\x20\x0D\x0Aa-zA-Z0-9\-'()+,./:=?;!*#@$_%]*$/;
const DECLARATIONS = ['ELEMENT', 'ATTLIST', 'ENTITY', 'NOTATION'];
const ATTRIBUTE_TYPES = ['CDATA', 'IDREFS', 'IDREF', 'ID', 'ENTITY', 'ENTITIES', 'NMTOKENS', 'NMTOKEN'];

/**
 * Reads a whole DOCTYPE (from '<!DOCTYPE' to its '>') and checks it against XML 1.0's grammar
 * for the internal subset and its well-formedness constraints. Internal parameter entities
 * referenced between declarations are read as declarations; nothing external is fetched.
 */
export function readDoctype(text: string, standalone: boolean): DoctypeResult {
	const reader = new DoctypeReader(text, standalone);
	try {
		reader.readDoctype();
	} catch (error) {
		// The reader throws nothing but DoctypeProblem: the first problem ends the reading.
		const { message, offset } = error as DoctypeProblem;
		return { problem: { message, offset: offset ?? 0 } };
	}
	return { doctype: { entities: reader.entities, undeclaredAllowed: reader.undeclaredAllowed, defaults: reader.defaults } };
}

class DoctypeReader {
	readonly entities = new Map<string, EntityDeclaration>();
	private readonly parameterEntities = new Map<string, string | null>();
	undeclaredAllowed = false;
	readonly defaults: Array<{ value: string; offset: number }> = [];
	private text: string;
	private pos = 0;
	/** Reading the replacement text of a parameter entity, where external-subset rules apply. */
	private inParameterEntity = false;
	/** Where, in the DOCTYPE, the parameter entity being read was referenced. */
	private referenceOffset = 0;
	private nesting = 0;

	constructor(
		text: string,
		private readonly standalone: boolean,
	) {
		this.text = text;
	}

	private fail(message: string, offset = this.pos): never {
		throw new DoctypeProblem(message, this.inParameterEntity ? this.referenceOffset : offset);
	}

	private at(literal: string): boolean {
		return this.text.startsWith(literal, this.pos);
	}

	private expect(literal: string, what: string): void {
		if (!this.at(literal)) this.unexpected(what);
		this.pos += literal.length;
	}

	private unexpected(what: string): never {
		if (this.pos >= this.text.length) this.fail(`The DOCTYPE ends where ${what} is expected`);
		const c = this.text.codePointAt(this.pos) as number;
		if (c === 0x25 && !this.inParameterEntity && !what.startsWith('a space')) {
			this.fail('A parameter entity reference is not allowed inside a declaration of the internal subset');
		}
		const shown = c > 0x20 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
		this.fail(`In the DOCTYPE, ${what} is expected, found ${shown}`);
	}

	/** Skips white space; whether there was any. */
	private skipSpace(): boolean {
		const start = this.pos;
		while (this.pos < this.text.length && isSpace(this.text.charCodeAt(this.pos))) this.pos++;
		return this.pos > start;
	}

	private requireSpace(where: string): void {
		if (!this.skipSpace()) this.unexpected(`a space ${where}`);
	}

	private readName(what: string, nmtoken = false): string {
		const start = this.pos;
		const text = this.text;
		while (this.pos < text.length) {
			const c = text.codePointAt(this.pos) as number;
			const ok = this.pos === start && !nmtoken ? isNameStart(c) : isNameChar(c);
			if (!ok) break;
			this.pos += c > 0xffff ? 2 : 1;
		}
		if (this.pos === start) this.unexpected(what);
		return text.slice(start, this.pos);
	}

	private readQuoted(what: string): string {
		const quote = this.text[this.pos];
		if (quote !== '"' && quote !== "'") this.unexpected(what);
		const end = this.text.indexOf(quote, this.pos + 1);
		if (end < 0) this.fail(`In the DOCTYPE, ${what} is not closed`);
		const value = this.text.slice(this.pos + 1, end);
		this.pos = end + 1;
		return value;
	}

	readDoctype(): void {
		this.expect('<!DOCTYPE', "'<!DOCTYPE'");
		this.requireSpace("after 'DOCTYPE'");
		this.readName('the name of the root element');
		const spaced = this.skipSpace();
		if (this.at('SYSTEM') || this.at('PUBLIC')) {
			if (!spaced) this.unexpected("a space before 'SYSTEM' or 'PUBLIC'");
			this.readExternalId(false);
			if (!this.standalone) this.undeclaredAllowed = true;
			this.skipSpace();
		}
		if (this.at('[')) {
			this.pos++;
			this.readSubset();
			this.expect(']', "']' to end the internal subset");
			this.skipSpace();
		}
		this.expect('>', "'>' to end the DOCTYPE");
	}

	/** Declarations, comments, processing instructions and parameter entity references. */
	private readSubset(): void {
		for (;;) {
			this.skipSpace();
			if (this.pos >= this.text.length || this.at(']]>') || (this.at(']') && !this.inParameterEntity)) return;
			if (this.at('%')) this.readParameterEntityReference();
			else if (this.at('<!--')) this.readComment();
			else if (this.at('<?')) this.readProcessingInstruction();
			else if (this.at('<![')) this.readConditionalSection();
			else if (this.at('<!')) this.readDeclaration();
			else this.unexpected('a declaration');
		}
	}

	private readDeclaration(): void {
		this.pos += 2;
		const keyword = DECLARATIONS.find((candidate) => this.at(candidate));
		if (!keyword) this.unexpected('ELEMENT, ATTLIST, ENTITY or NOTATION');
		this.pos += keyword.length;
		if (this.inParameterEntity && this.hasParameterReferenceBefore('>')) {
			// Inside a parameter entity's text, a declaration may be built from further parameter
			// entities: not checked here, and what it declares is not known.
			this.skipDeclaration();
			if (!this.standalone) this.undeclaredAllowed = true;
			return;
		}
		this.requireSpace(`after '${keyword}'`);
		if (keyword === 'ELEMENT') this.readElementDeclaration();
		else if (keyword === 'ATTLIST') this.readAttributeListDeclaration();
		else if (keyword === 'ENTITY') this.readEntityDeclaration();
		else this.readNotationDeclaration();
		this.skipSpace();
		if (!this.at('>')) this.unexpected(`'>' to end the ${keyword} declaration`);
		this.pos++;
	}

	/** Whether a '%' occurs outside quotes before the next `end` outside quotes. */
	private hasParameterReferenceBefore(end: string): boolean {
		let quote = '';
		for (let k = this.pos; k < this.text.length; k++) {
			const c = this.text[k];
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

	private skipDeclaration(): void {
		let quote = '';
		while (this.pos < this.text.length) {
			const c = this.text[this.pos++];
			if (quote) {
				if (c === quote) quote = '';
			} else if (c === '"' || c === "'") {
				quote = c;
			} else if (c === '>') {
				return;
			}
		}
		this.fail('A declaration is not closed');
	}

	private readElementDeclaration(): void {
		this.readName('an element name');
		this.requireSpace('after the element name');
		if (this.at('EMPTY')) this.pos += 5;
		else if (this.at('ANY')) this.pos += 3;
		else if (this.at('(')) this.readContentModel();
		else this.unexpected("EMPTY, ANY or '(' for the content model");
	}

	private readContentModel(): void {
		this.pos++;
		this.skipSpace();
		if (this.at('#PCDATA')) {
			this.pos += 7;
			let names = 0;
			for (;;) {
				this.skipSpace();
				if (this.at(')')) break;
				this.expect('|', "'|' or ')' in mixed content");
				this.skipSpace();
				this.readName('an element name');
				names++;
			}
			this.pos++;
			if (this.at('*')) this.pos++;
			else if (names > 0) this.unexpected("')*' to end mixed content with element names");
			return;
		}
		this.readGroup(0);
	}

	/** A choice or sequence; the '(' has been read. */
	private readGroup(depth: number): void {
		if (depth > MAX_NESTING) this.fail(`The content model nests more than ${MAX_NESTING} groups`);
		let separator = '';
		for (;;) {
			this.skipSpace();
			if (this.at('(')) {
				this.pos++;
				this.readGroup(depth + 1);
			} else {
				this.readName('an element name or a group');
				this.readOccurrence();
			}
			this.skipSpace();
			if (this.at(')')) break;
			const c = this.text[this.pos];
			if (c !== '|' && c !== ',') this.unexpected("'|', ',' or ')' in the content model");
			if (separator && c !== separator) this.fail("A content model group mixes '|' and ','");
			separator = c;
			this.pos++;
		}
		this.pos++;
		this.readOccurrence();
	}

	private readOccurrence(): void {
		const c = this.text[this.pos];
		if (c === '?' || c === '*' || c === '+') this.pos++;
	}

	private readAttributeListDeclaration(): void {
		this.readName('an element name');
		for (;;) {
			const spaced = this.skipSpace();
			if (this.at('>') || this.pos >= this.text.length) return;
			if (!spaced) this.unexpected('a space before the attribute definition');
			this.readName('an attribute name');
			this.requireSpace('after the attribute name');
			this.readAttributeType();
			this.requireSpace('after the attribute type');
			this.readDefault();
		}
	}

	private readAttributeType(): void {
		if (this.at('NOTATION')) {
			this.pos += 8;
			this.requireSpace("after 'NOTATION'");
			this.readEnumeration(false);
			return;
		}
		if (this.at('(')) {
			this.readEnumeration(true);
			return;
		}
		const type = ATTRIBUTE_TYPES.find((candidate) => this.at(candidate));
		if (!type) this.unexpected('an attribute type');
		this.pos += type.length;
	}

	private readEnumeration(nmtokens: boolean): void {
		this.expect('(', "'('");
		for (;;) {
			this.skipSpace();
			this.readName(nmtokens ? 'a name token' : 'a notation name', nmtokens);
			this.skipSpace();
			if (this.at(')')) break;
			this.expect('|', "'|' or ')'");
		}
		this.pos++;
	}

	private readDefault(): void {
		if (this.at('#REQUIRED')) {
			this.pos += 9;
			return;
		}
		if (this.at('#IMPLIED')) {
			this.pos += 8;
			return;
		}
		if (this.at('#FIXED')) {
			this.pos += 6;
			this.requireSpace("after '#FIXED'");
		}
		const offset = this.pos;
		const value = this.readQuoted('a default value');
		const lt = value.indexOf('<');
		if (lt >= 0) this.fail("'<' is not allowed in an attribute value", offset + 1 + lt);
		this.checkReferences(value, offset + 1, false);
		this.checkDeclaredBefore(value, offset);
		this.defaults.push({ value, offset });
	}

	/**
	 * Checks the references of a literal: character references must name characters XML allows,
	 * entity references must be well-formed names ending in ';', and parameter entity references
	 * (entity values only) are not allowed in the internal subset. Returns the literal with its
	 * character references replaced: the replacement text of an entity value; null when that
	 * depends on a parameter entity (inside one), which is not expanded.
	 */
	private checkReferences(value: string, offset: number, entityValue: boolean): string | null {
		let result = '';
		let k = 0;
		while (k < value.length) {
			const c = value[k];
			if (c === '%' && entityValue) {
				if (!this.inParameterEntity) this.fail('A parameter entity reference is not allowed in an entity value of the internal subset', offset + k);
				const end = value.indexOf(';', k);
				const name = end > k ? value.slice(k + 1, end) : '';
				if (!isXmlName(name)) this.fail("'%' must start a parameter entity reference such as '%name;'", offset + k);
				return null;
			}
			if (c !== '&') {
				result += c;
				k++;
				continue;
			}
			const end = value.indexOf(';', k);
			if (end < 0) this.fail("'&' must start a reference such as '&amp;'", offset + k);
			const body = value.slice(k + 1, end);
			if (body.startsWith('#')) {
				const code = characterReference(body);
				if (code === null) this.fail(`'&${body};' is not a reference to a character XML allows`, offset + k);
				result += String.fromCodePoint(code);
			} else {
				if (!isXmlName(body)) this.fail("'&' must start a reference such as '&amp;'", offset + k);
				result += `&${body};`;
			}
			k = end + 1;
		}
		return result;
	}

	/** A default value may refer only to general entities declared before it. */
	private checkDeclaredBefore(value: string, offset: number): void {
		if (this.undeclaredAllowed) return;
		for (const match of value.matchAll(/&([^#;][^;]*);/g)) {
			const name = match[1];
			if (!isPredefinedEntity(name) && !this.entities.has(name)) {
				this.fail(`The entity '&${name};' in a default value is not declared before it`, offset + 1 + (match.index ?? 0));
			}
		}
	}

	private readEntityDeclaration(): void {
		let parameter = false;
		if (this.at('%')) {
			this.pos++;
			this.requireSpace("after '%'");
			parameter = true;
		}
		const name = this.readName('an entity name');
		this.requireSpace('after the entity name');
		let value: string | null = null;
		let unparsed = false;
		const external = !(this.at('"') || this.at("'"));
		if (!external) {
			const offset = this.pos + 1;
			const literal = this.readQuoted('the entity value');
			value = this.checkReferences(literal, offset, true);
		} else {
			this.readExternalId(false);
			const spaced = this.skipSpace();
			if (this.at('NDATA')) {
				if (parameter) this.fail('A parameter entity cannot be unparsed (NDATA)');
				if (!spaced) this.unexpected("a space before 'NDATA'");
				this.pos += 5;
				this.requireSpace("after 'NDATA'");
				this.readName('a notation name');
				unparsed = true;
			}
		}
		// The first declaration of an entity is the one that counts.
		if (parameter) {
			if (!this.parameterEntities.has(name)) this.parameterEntities.set(name, value);
		} else if (!this.entities.has(name)) {
			this.entities.set(name, { value, external, unparsed });
		}
	}

	private readNotationDeclaration(): void {
		this.readName('a notation name');
		this.requireSpace('after the notation name');
		this.readExternalId(true);
	}

	/** SYSTEM "uri" or PUBLIC "id" "uri" (for a notation the URI after PUBLIC is optional). */
	private readExternalId(notation: boolean): void {
		if (this.at('SYSTEM')) {
			this.pos += 6;
			this.requireSpace("after 'SYSTEM'");
			this.readQuoted('a system identifier');
			return;
		}
		if (!this.at('PUBLIC')) this.unexpected("a quoted value, 'SYSTEM' or 'PUBLIC'");
		this.pos += 6;
		this.requireSpace("after 'PUBLIC'");
		const offset = this.pos;
		const publicId = this.readQuoted('a public identifier');
		if (!PUBID_CHARS.test(publicId)) this.fail('A public identifier holds a character it may not hold', offset);
		const spaced = this.skipSpace();
		if (notation && !(this.at('"') || this.at("'"))) return;
		if (!spaced) this.unexpected('a space before the system identifier');
		this.readQuoted('a system identifier');
	}

	private readComment(): void {
		const start = this.pos;
		const end = this.text.indexOf('--', start + 4);
		if (end < 0) this.fail('A comment is not closed', start);
		if (this.text[end + 2] !== '>') this.fail("'--' is not allowed inside a comment", end);
		this.pos = end + 3;
	}

	private readProcessingInstruction(): void {
		const start = this.pos;
		this.pos += 2;
		const target = this.readName('a processing instruction target');
		if (target.toLowerCase() === 'xml') {
			this.fail(target === 'xml' ? 'The XML declaration is only allowed at the very start of the document' : `The processing instruction target '${target}' is reserved`, start);
		}
		if (!this.at('?>')) this.requireSpace('after the processing instruction target');
		const end = this.text.indexOf('?>', this.pos);
		if (end < 0) this.fail('A processing instruction is not closed', start);
		this.pos = end + 2;
	}

	private readConditionalSection(): void {
		if (!this.inParameterEntity) this.fail('Conditional sections are only allowed in the external subset');
		this.pos += 3;
		this.skipSpace();
		if (this.at('INCLUDE')) {
			this.pos += 7;
			this.skipSpace();
			this.expect('[', "'['");
			this.readSubset();
			this.expect(']]>', "']]>'");
			return;
		}
		this.expect('IGNORE', "'INCLUDE' or 'IGNORE'");
		this.skipSpace();
		this.expect('[', "'['");
		for (let depth = 1; depth > 0; ) {
			const open = this.text.indexOf('<![', this.pos);
			const close = this.text.indexOf(']]>', this.pos);
			if (close < 0) this.fail('A conditional section is not closed');
			if (open >= 0 && open < close) {
				depth++;
				this.pos = open + 3;
			} else {
				depth--;
				this.pos = close + 3;
			}
		}
	}

	private readParameterEntityReference(): void {
		const start = this.pos;
		this.pos++;
		const name = this.readName('a parameter entity name');
		this.expect(';', "';' to end the parameter entity reference");
		// Once a parameter entity is referenced, an undeclared general entity is a validity
		// problem, not a well-formedness one (unless the document is standalone).
		if (!this.standalone) this.undeclaredAllowed = true;
		const value = this.parameterEntities.get(name);
		if (value === undefined || value === null) return;
		if (this.nesting >= MAX_NESTING) this.fail(`Parameter entities are nested more than ${MAX_NESTING} deep`, start);
		const saved = { text: this.text, pos: this.pos, inParameterEntity: this.inParameterEntity, referenceOffset: this.referenceOffset };
		if (!this.inParameterEntity) this.referenceOffset = start;
		this.text = value;
		this.pos = 0;
		this.inParameterEntity = true;
		this.nesting++;
		this.readSubset();
		if (this.pos < this.text.length) this.unexpected('a declaration');
		this.nesting--;
		Object.assign(this, saved);
	}
}

