import { isSpace } from '../chars';

export interface XmlDeclaration {
	/** The declared encoding as written, or undefined. */
	encoding?: string;
	standalone: boolean;
}

export type DeclarationResult =
	| { declaration: XmlDeclaration }
	| { problem: { message: string; offset: number } };

const VERSION = /^1\.[0-9]+$/;
const ENCODING_NAME = /^[A-Za-z][A-Za-z0-9._-]*$/;

/**
 * Reads the XML declaration `text` (from '<?xml' to '?>'): version, then optionally encoding and
 * standalone, in that order, each `name = "value"` after a space.
 */
export function readDeclaration(text: string): DeclarationResult {
	let pos = 5;
	const declaration: XmlDeclaration = { standalone: false };
	const seen: string[] = [];
	for (;;) {
		const spaceStart = pos;
		while (pos < text.length && isSpace(text.charCodeAt(pos))) pos++;
		if (text.startsWith('?>', pos)) {
			if (pos !== text.length - 2) return fail("The XML declaration ends at '?>'", pos);
			break;
		}
		if (pos === spaceStart)
			return fail('A space is needed between the parts of the XML declaration', pos);
		const nameStart = pos;
		while (pos < text.length && /[a-zA-Z]/.test(text[pos])) pos++;
		const name = text.slice(nameStart, pos);
		const expected = ['version', 'encoding', 'standalone'].filter(
			(candidate) => !seen.includes(candidate),
		);
		const order = ['version', 'encoding', 'standalone'];
		if (!order.includes(name)) {
			return fail(
				`The XML declaration may hold only version, encoding and standalone, found '${name || text[nameStart]}'`,
				nameStart,
			);
		}
		if (seen.length === 0 && name !== 'version')
			return fail('The XML declaration must start with the version', nameStart);
		if (
			!expected.includes(name) ||
			order.indexOf(name) < order.indexOf(seen[seen.length - 1] ?? 'version')
		) {
			return fail(
				`'${name}' is repeated or out of order in the XML declaration (version, encoding, standalone)`,
				nameStart,
			);
		}
		seen.push(name);
		while (pos < text.length && isSpace(text.charCodeAt(pos))) pos++;
		if (text[pos] !== '=') return fail(`'=' expected after '${name}' in the XML declaration`, pos);
		pos++;
		while (pos < text.length && isSpace(text.charCodeAt(pos))) pos++;
		const quote = text[pos];
		if (quote !== '"' && quote !== "'")
			return fail(`The value of '${name}' in the XML declaration must be in quotes`, pos);
		const end = text.indexOf(quote, pos + 1);
		if (end < 0) return fail(`The value of '${name}' in the XML declaration is not closed`, pos);
		const value = text.slice(pos + 1, end);
		if (name === 'version' && !VERSION.test(value))
			return fail(`The XML version '${value}' is not 1.x`, pos + 1);
		if (name === 'encoding') {
			if (!ENCODING_NAME.test(value)) return fail(`'${value}' is not an encoding name`, pos + 1);
			declaration.encoding = value;
		}
		if (name === 'standalone') {
			if (value !== 'yes' && value !== 'no')
				return fail(`standalone must be 'yes' or 'no', found '${value}'`, pos + 1);
			declaration.standalone = value === 'yes';
		}
		pos = end + 1;
	}
	if (!seen.includes('version')) return fail('The XML declaration must give the version', 5);
	return { declaration };
}

function fail(message: string, offset: number): DeclarationResult {
	return { problem: { message, offset } };
}
