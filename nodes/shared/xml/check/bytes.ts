/** The byte values the checker looks for, and a growable byte buffer for names and the DOCTYPE. */
export const LT = 0x3c;
export const GT = 0x3e;
export const AMP = 0x26;
export const RSQB = 0x5d;
export const DASH = 0x2d;
export const QUESTION = 0x3f;
export const SLASH = 0x2f;
export const BANG = 0x21;
export const EQUALS = 0x3d;
export const SEMICOLON = 0x3b;
export const HASH = 0x23;
export const QUOTE = 0x22;
export const APOSTROPHE = 0x27;
export const NEWLINE = 0x0a;

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
		return Buffer.from(this.data.buffer, this.data.byteOffset + start, end - start).toString('utf8');
	}
}
