import { isNameChar, isNameStart } from '../chars';

/**
 * The byte values the checker looks for. A const enum: the compiler writes each use as a number,
 * so the hot loops of every module compare against constants instead of reading another module.
 */
export const enum Byte {
	Newline = 0x0a,
	Bang = 0x21,
	Quote = 0x22,
	Hash = 0x23,
	Amp = 0x26,
	Apostrophe = 0x27,
	Dash = 0x2d,
	Slash = 0x2f,
	Semicolon = 0x3b,
	Lt = 0x3c,
	Equals = 0x3d,
	Gt = 0x3e,
	Question = 0x3f,
	LeftBracket = 0x5b,
	RightBracket = 0x5d,
}

// Byte classes. A 0 in a skip table means "an ordinary byte here": runs of them are passed over
// in a tight loop, which is where a document's bytes mostly are. Control characters other than
// tab and carriage return, and every byte of a non-ASCII character, stop the loop to be checked.
function skipTable(stops: number[]): Uint8Array {
	const result = new Uint8Array(256);
	for (let b = 0; b < 0x20; b++) if (b !== 0x09 && b !== 0x0d) result[b] = 1;
	for (let b = 0x80; b < 0x100; b++) result[b] = 1;
	for (const stop of stops) result[stop] = 1;
	return result;
}
export const TEXT_STOPS = skipTable([Byte.Lt, Byte.Amp, Byte.RightBracket]);
export const ATTRIBUTE_STOPS = skipTable([Byte.Lt, Byte.Amp, Byte.Quote, Byte.Apostrophe]);
export const COMMENT_STOPS = skipTable([Byte.Dash]);
export const CDATA_STOPS = skipTable([Byte.RightBracket]);
export const PI_STOPS = skipTable([Byte.Question]);

/**
 * 1: ASCII name start character; 2: other ASCII name character; 0: anything else. Non-ASCII name
 * characters are decoded and looked up by code point.
 */
export const NAME_BYTE = new Uint8Array(256);
for (let b = 0; b < 0x80; b++) {
	if (isNameStart(b)) NAME_BYTE[b] = 1;
	else if (isNameChar(b)) NAME_BYTE[b] = 2;
}

export function startsWith(buf: Uint8Array, i: number, end: number, expected: Uint8Array): boolean {
	if (i + expected.length > end) return false;
	for (let k = 0; k < expected.length; k++) if (buf[i + k] !== expected[k]) return false;
	return true;
}

/** A growable byte buffer for names and the DOCTYPE. */
export class Bytes {
	data = new Uint8Array(64);
	length = 0;

	append(source: Uint8Array, start: number, end: number): void {
		const needed = this.length + end - start;
		if (needed > this.data.length) {
			let size = this.data.length * 2;
			while (size < needed) size *= 2;
			const grown = new Uint8Array(size);
			grown.set(this.data.subarray(0, this.length));
			this.data = grown;
		}
		if (end - start < 32) {
			const data = this.data;
			for (let k = start, at = this.length; k < end; k++, at++) data[at] = source[k];
		} else {
			this.data.set(source.subarray(start, end), this.length);
		}
		this.length = needed;
	}

	text(start = 0, end = this.length): string {
		return Buffer.from(this.data.buffer, this.data.byteOffset + start, end - start).toString(
			'utf8',
		);
	}
}
