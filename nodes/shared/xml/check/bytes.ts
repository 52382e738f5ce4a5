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
		return Buffer.from(this.data.buffer, this.data.byteOffset + start, end - start).toString('utf8');
	}
}
