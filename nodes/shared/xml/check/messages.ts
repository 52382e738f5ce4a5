import { Byte } from './bytes';
import { State } from './states';

/** What a document that ends in `state` ends inside, for a message. */
export function describeState(state: State): string {
	switch (state) {
		case State.Comment:
		case State.CommentDash:
		case State.CommentDashes:
			return 'a comment';
		case State.CData:
		case State.CDataBrackets:
			return 'a CDATA section';
		case State.PiTarget:
		case State.PiSpace:
		case State.PiBody:
		case State.PiQuestion:
			return 'a processing instruction';
		case State.Declaration:
		case State.DeclarationQuestion:
			return 'the XML declaration';
		case State.Doctype:
			return 'the DOCTYPE';
		case State.Reference:
		case State.EntityName:
		case State.CharRefStart:
		case State.CharRefDecimal:
		case State.CharRefHex:
			return 'a reference';
		case State.AttrValue:
			return 'an attribute value';
		default:
			return 'a tag';
	}
}

/** Why the bytes at `buf[i]` are not a UTF-8 character. */
export function invalidUtf8Message(buf: Uint8Array, i: number, end: number): string {
	const b = buf[i];
	const expected = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
	let length = 1;
	while (length < expected && i + length < end && (buf[i + length] & 0xc0) === 0x80) length++;
	const shown = Array.from(
		buf.subarray(i, i + length),
		(byte) => `0x${byte.toString(16).toUpperCase().padStart(2, '0')}`,
	);
	const what = shown.length === 1 ? `The byte ${shown[0]} is` : `The bytes ${shown.join(' ')} are`;
	return `${what} not valid UTF-8; if the file is in another encoding (e.g. Windows-1252), its XML declaration must say so`;
}

/** The line and column of `text[offset]`, when `text` starts at `line` and `column`. */
export function positionAfter(
	text: string,
	offset: number,
	line: number,
	column: number,
): { line: number; column: number } {
	for (let k = 0; k < offset && k < text.length; k++) {
		if (text.charCodeAt(k) === Byte.Newline) {
			line++;
			column = 1;
		} else {
			column++;
		}
	}
	return { line, column };
}
