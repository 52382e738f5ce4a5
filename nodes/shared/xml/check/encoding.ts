import { readDeclaration, type XmlDeclaration } from './declaration';
import type { XmlProblem } from './scanContext';

/** Turns the next bytes into UTF-8 for the scanner; a string is why they cannot be read. */
export type Transcoder = (
	bytes: Buffer,
	final: boolean,
) => { utf8: Buffer; problem?: string } | string;

export interface Encoding {
	byteOrderMarkLength: number;
	standalone: boolean;
	/** null: the bytes are UTF-8 and go to the scanner as they are. */
	transcode: Transcoder | null;
}

type Family = 'utf-8' | 'utf-16le' | 'utf-16be';

/** Bytes looked at for the XML declaration; one still open after them is refused. */
export const HEAD_TEXT_BYTES = 64 * 1024;
/** '<?xml' not followed by a name character: the XML declaration, well-formed or not. */
const DECLARATION_START = /^<\?xml(?![A-Za-z0-9._:\x80-\uFFFF-])/;

const LATIN1 = new Set([
	'iso-8859-1',
	'iso8859-1',
	'iso_8859-1',
	'latin1',
	'l1',
	'iso-ir-100',
	'cp819',
	'ibm819',
]);
const WINDOWS_1252 = new Set(['windows-1252', 'cp1252', 'x-cp1252']);
const ASCII = new Set(['us-ascii', 'ascii', 'iso646-us']);

/**
 * Decides how to read a document from its first bytes: a byte-order mark, then the encoding its
 * XML declaration names (checked whole here, as it decides the rest).
 */
export function encodingOf(head: Buffer): Encoding | { problem: XmlProblem } {
	let family: Family = 'utf-8';
	let byteOrderMarkLength = 0;
	if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) {
		byteOrderMarkLength = 3;
	} else if (head[0] === 0xff && head[1] === 0xfe) {
		family = 'utf-16le';
		byteOrderMarkLength = 2;
	} else if (head[0] === 0xfe && head[1] === 0xff) {
		family = 'utf-16be';
		byteOrderMarkLength = 2;
	} else if (
		(head[0] === 0x3c && head[1] === 0x00) ||
		(head[0] === 0x00 && head[1] === 0x3c) ||
		(head[0] === 0x00 && head[1] === 0x00)
	) {
		return problem(
			'The document looks like UTF-16 or UTF-32 without a byte-order mark; save it as UTF-8, or as UTF-16 with a byte-order mark',
		);
	} else if (head[0] === 0x4c && head[1] === 0x6f && head[2] === 0xa7 && head[3] === 0x94) {
		return problem('The document is in EBCDIC, which this check does not read; save it as UTF-8');
	}
	const text = headText(head, family, byteOrderMarkLength);
	let declaration: XmlDeclaration = { standalone: false };
	if (DECLARATION_START.test(text)) {
		const end = text.indexOf('?>');
		if (end < 0) return problem('The XML declaration is not closed');
		const result = readDeclaration(text.slice(0, end + 2));
		if ('problem' in result) return problem(result.problem.message, text, result.problem.offset);
		declaration = result.declaration;
	}
	const declared = declaration.encoding?.toLowerCase();
	const named = `'${declaration.encoding}'`;
	let transcode: Transcoder | null;
	if (family !== 'utf-8') {
		if (declared !== undefined && declared !== 'utf-16' && declared !== family) {
			return problem(
				`The document starts with a UTF-16 byte-order mark but its XML declaration says the encoding is ${named}`,
			);
		}
		transcode = decoderTranscoder(family, 'UTF-16');
	} else if (declared === undefined || declared === 'utf-8') {
		transcode = null;
	} else if (byteOrderMarkLength > 0) {
		return problem(
			`The document starts with a UTF-8 byte-order mark but its XML declaration says the encoding is ${named}`,
		);
	} else if (
		declared.startsWith('utf-16') ||
		declared === 'ucs-2' ||
		declared.startsWith('utf-32')
	) {
		return problem(
			`The XML declaration says the encoding is ${named}, but the document has no byte-order mark and its bytes are not in that encoding`,
		);
	} else if (LATIN1.has(declared)) {
		transcode = (bytes) => ({ utf8: Buffer.from(bytes.toString('latin1'), 'utf8') });
	} else if (WINDOWS_1252.has(declared)) {
		transcode = decoderTranscoder('windows-1252', 'Windows-1252');
	} else if (ASCII.has(declared)) {
		transcode = asciiTranscoder;
	} else {
		return problem(
			`The XML declaration says the encoding is ${named}, which this check does not read (it reads UTF-8, UTF-16, ISO-8859-1, Windows-1252 and US-ASCII); save the document as UTF-8, or turn Validate Before Upload off`,
		);
	}
	return { byteOrderMarkLength, standalone: declaration.standalone, transcode };
}

/** The first characters of the document, enough to read its XML declaration. */
function headText(head: Buffer, family: Family, byteOrderMarkLength: number): string {
	const body = head.subarray(byteOrderMarkLength, byteOrderMarkLength + HEAD_TEXT_BYTES);
	if (family === 'utf-8') return body.toString('latin1');
	// Whole UTF-16 units only: half of one would become U+FFFD.
	return new TextDecoder(family).decode(body.subarray(0, body.length & ~1));
}

/** Whether the bytes start an XML declaration whose '?>' is not among them yet. */
export function declarationOpen(head: Buffer): boolean {
	const family: Family =
		head[0] === 0xff && head[1] === 0xfe
			? 'utf-16le'
			: head[0] === 0xfe && head[1] === 0xff
				? 'utf-16be'
				: 'utf-8';
	const byteOrderMarkLength =
		family !== 'utf-8' ? 2 : head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
	const text = headText(head, family, byteOrderMarkLength);
	return DECLARATION_START.test(text) && !text.includes('?>');
}

function decoderTranscoder(label: string, name: string): Transcoder {
	const decoder = new TextDecoder(label, { fatal: true });
	return (bytes, final) => {
		try {
			return { utf8: Buffer.from(decoder.decode(bytes, { stream: !final }), 'utf8') };
		} catch {
			return `The bytes after this point are not valid ${name}, the encoding the document declares`;
		}
	};
}

function asciiTranscoder(bytes: Buffer): { utf8: Buffer; problem?: string } {
	for (let i = 0; i < bytes.length; i++) {
		if (bytes[i] >= 0x80) {
			const shown = bytes[i].toString(16).toUpperCase();
			return {
				utf8: bytes.subarray(0, i),
				problem: `The byte 0x${shown} is not US-ASCII, the encoding the XML declaration names`,
			};
		}
	}
	return { utf8: bytes };
}

function problem(message: string, text = '', offset = 0): { problem: XmlProblem } {
	let line = 1;
	let column = 1;
	for (let k = 0; k < offset; k++) {
		if (text.charCodeAt(k) === 0x0a) {
			line++;
			column = 1;
		} else {
			column++;
		}
	}
	return { problem: { message, line, column } };
}
