/**
 * Element, attribute list and notation declarations. Each reader starts after its keyword and
 * the space that follows it, and stops before the declaration's '>'.
 */

import { checkDeclaredBefore, checkLiteralReferences } from './doctypeEntities';
import { type DoctypeReader, MAX_NESTING } from './doctypeReader';

const ATTRIBUTE_TYPES = [
	'CDATA',
	'IDREFS',
	'IDREF',
	'ID',
	'ENTITY',
	'ENTITIES',
	'NMTOKENS',
	'NMTOKEN',
];

/** <!ELEMENT name EMPTY>, ANY, or a content model in parentheses. */
export function readElementDeclaration(r: DoctypeReader): void {
	r.readName('an element name');
	r.requireSpace('after the element name');
	if (r.at('EMPTY')) r.pos += 5;
	else if (r.at('ANY')) r.pos += 3;
	else if (r.at('(')) readContentModel(r);
	else r.unexpected("EMPTY, ANY or '(' for the content model");
}

/** Mixed content ('(#PCDATA | name)*') or a group of child elements. */
function readContentModel(r: DoctypeReader): void {
	r.pos++;
	r.skipSpace();
	if (r.at('#PCDATA')) {
		r.pos += 7;
		let names = 0;
		for (;;) {
			r.skipSpace();
			if (r.at(')')) break;
			r.expect('|', "'|' or ')' in mixed content");
			r.skipSpace();
			r.readName('an element name');
			names++;
		}
		r.pos++;
		if (r.at('*')) r.pos++;
		else if (names > 0) r.unexpected("')*' to end mixed content with element names");
		return;
	}
	readGroup(r, 0);
}

/** A choice or sequence; the '(' has been read. */
function readGroup(r: DoctypeReader, depth: number): void {
	if (depth > MAX_NESTING) r.fail(`The content model nests more than ${MAX_NESTING} groups`);
	let separator = '';
	for (;;) {
		r.skipSpace();
		if (r.at('(')) {
			r.pos++;
			readGroup(r, depth + 1);
		} else {
			r.readName('an element name or a group');
			readOccurrence(r);
		}
		r.skipSpace();
		if (r.at(')')) break;
		const c = r.text[r.pos];
		if (c !== '|' && c !== ',') r.unexpected("'|', ',' or ')' in the content model");
		if (separator && c !== separator) r.fail("A content model group mixes '|' and ','");
		separator = c;
		r.pos++;
	}
	r.pos++;
	readOccurrence(r);
}

function readOccurrence(r: DoctypeReader): void {
	const c = r.text[r.pos];
	if (c === '?' || c === '*' || c === '+') r.pos++;
}

/** <!ATTLIST element name type default ...>. */
export function readAttributeListDeclaration(r: DoctypeReader): void {
	r.readName('an element name');
	for (;;) {
		const spaced = r.skipSpace();
		if (r.at('>') || r.pos >= r.text.length) return;
		if (!spaced) r.unexpected('a space before the attribute definition');
		r.readName('an attribute name');
		r.requireSpace('after the attribute name');
		readAttributeType(r);
		r.requireSpace('after the attribute type');
		readDefault(r);
	}
}

function readAttributeType(r: DoctypeReader): void {
	if (r.at('NOTATION')) {
		r.pos += 8;
		r.requireSpace("after 'NOTATION'");
		readEnumeration(r, false);
		return;
	}
	if (r.at('(')) {
		readEnumeration(r, true);
		return;
	}
	const type = ATTRIBUTE_TYPES.find((candidate) => r.at(candidate));
	if (!type) r.unexpected('an attribute type');
	r.pos += type.length;
}

function readEnumeration(r: DoctypeReader, nmtokens: boolean): void {
	r.expect('(', "'('");
	for (;;) {
		r.skipSpace();
		r.readName(nmtokens ? 'a name token' : 'a notation name', nmtokens);
		r.skipSpace();
		if (r.at(')')) break;
		r.expect('|', "'|' or ')'");
	}
	r.pos++;
}

/** #REQUIRED, #IMPLIED, or a value (after #FIXED or not), which must be a well-formed attribute value. */
function readDefault(r: DoctypeReader): void {
	if (r.at('#REQUIRED')) {
		r.pos += 9;
		return;
	}
	if (r.at('#IMPLIED')) {
		r.pos += 8;
		return;
	}
	if (r.at('#FIXED')) {
		r.pos += 6;
		r.requireSpace("after '#FIXED'");
	}
	const offset = r.pos;
	const value = r.readQuoted('a default value');
	const lt = value.indexOf('<');
	if (lt >= 0) r.fail("'<' is not allowed in an attribute value", offset + 1 + lt);
	checkLiteralReferences(r, value, offset + 1, false);
	checkDeclaredBefore(r, value, offset);
	r.defaults.push({ value, offset });
}

/** <!NOTATION name SYSTEM "uri">, or PUBLIC "id" with an optional URI. */
export function readNotationDeclaration(r: DoctypeReader): void {
	r.readName('a notation name');
	r.requireSpace('after the notation name');
	r.readExternalId(true);
}
