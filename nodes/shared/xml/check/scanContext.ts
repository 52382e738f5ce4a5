import { describeChar, isNameChar, isNameStart, isXmlChar } from '../chars';
import { Byte, Bytes, NAME_BYTE } from './bytes';
import type { DoctypeCollector } from './doctypeCollector';
import type { EntityResolver } from './entities';
import { invalidUtf8Message } from './messages';
import { ScanMode, State, Where } from './states';

/**
 * Where and why a document is not well-formed. Lines and columns count from 1; columns count
 * UTF-16 code units, as most editors do.
 */
export interface XmlProblem {
	message: string;
	line: number;
	column: number;
}

/**
 * What the parts of the scanner share while they read one document, or one entity's replacement
 * text: the state, the position, the open elements, the tag and the name being read, and the
 * first problem. The main loop (scanner.ts) and the parts (tags.ts, references.ts, markup.ts) are
 * functions over it, named `s` where they take it; one class, so every one of them always sees
 * objects of one shape, which keeps their property reads fast.
 */
export class ScanContext {
	problem: XmlProblem | null = null;
	state: State;
	where = Where.Prolog;
	/** Index after the byte(s) the last byte-at-a-time step consumed. */
	nextIndex = 0;

	// The position. Columns count UTF-16 units: `extra` counts the bytes beyond one unit per character.
	/** Absolute offset of the current chunk's first byte. */
	base = 0;
	line = 1;
	lineStart = 0;
	extra = 0;
	extraAtLineStart = 0;
	/** Where the markup being read started: a problem found at its end is reported there. */
	markLine = 1;
	markColumn = 1;
	/** The length in bytes of the character `decode` read last. */
	private decodedLength = 0;

	// Open elements: their names back to back in `stack`, where each ends, where each started.
	readonly stack = new Bytes();
	readonly stackEnds: number[] = [];
	readonly openLines: number[] = [];
	readonly openColumns: number[] = [];
	rootSeen = false;

	// The start tag being read: its attribute names back to back, where each ends (as a set once
	// there are many), the quote of the value being read, and whether a space came before the next.
	readonly attributes = new Bytes();
	readonly attributeEnds: number[] = [];
	attributeSet: Set<string> | undefined;
	quote = 0;
	sawSpace = false;
	/** Where the attribute names of a tag read in one go start and end in the chunk. */
	readonly simpleAttributeStarts: number[] = [];
	readonly simpleAttributeEnds: number[] = [];

	/** A name being read (end tag, reference, processing instruction target). */
	readonly scratch = new Bytes();
	referenceInAttribute = false;
	charRefValue = 0;
	charRefDigits = 0;
	/** How many ']' in a row, in text or a CDATA section. */
	brackets = 0;
	/** What follows '<!' so far, while it may still start a comment, CDATA section or DOCTYPE. */
	bang = '';
	declarationSeen = false;
	doctype: DoctypeCollector | undefined;

	constructor(
		readonly mode: ScanMode,
		public resolver: EntityResolver,
		readonly standalone: boolean,
	) {
		this.state = mode === ScanMode.Document ? State.Misc : State.Text;
		if (mode === ScanMode.Content) this.where = Where.Root;
	}

	/** A line break at absolute offset `base + i`. */
	newline(i: number): void {
		this.line++;
		this.lineStart = this.base + i + 1;
		this.extraAtLineStart = this.extra;
	}

	/**
	 * Checks the character at `buf[i]`, a byte outside every state's plain set: a line break, a
	 * carriage return, a control character or the start of a multi-byte character. Returns the
	 * index after it, or `end` with the problem set.
	 */
	character(buf: Uint8Array, i: number, end: number): number {
		const b = buf[i];
		if (b < 0x80) {
			if (b === Byte.Newline) this.newline(i);
			else if (b !== 0x0d && b !== 0x09)
				return this.failAt(`The character ${describeChar(b)} is not allowed in XML`, i, end);
			return i + 1;
		}
		const c = this.decode(buf, i, end);
		if (c < 0) return this.failAt(invalidUtf8Message(buf, i, end), i, end);
		if (!isXmlChar(c))
			return this.failAt(`The character ${describeChar(c)} is not allowed in XML`, i, end);
		return this.advanceDecoded(i);
	}

	/** The code point of the UTF-8 sequence at `buf[i]`, or -1 when it is not valid UTF-8. */
	decode(buf: Uint8Array, i: number, end: number): number {
		const b = buf[i];
		let c: number;
		let length: number;
		let min: number;
		if (b >= 0xc2 && b <= 0xdf) {
			c = b & 0x1f;
			length = 2;
			min = 0x80;
		} else if (b >= 0xe0 && b <= 0xef) {
			c = b & 0x0f;
			length = 3;
			min = 0x800;
		} else if (b >= 0xf0 && b <= 0xf4) {
			c = b & 0x07;
			length = 4;
			min = 0x10000;
		} else {
			return -1;
		}
		if (i + length > end) return -1;
		for (let k = 1; k < length; k++) {
			const next = buf[i + k];
			if ((next & 0xc0) !== 0x80) return -1;
			c = (c << 6) | (next & 0x3f);
		}
		if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return -1;
		this.decodedLength = length;
		return c;
	}

	/** Moves past the character `decode` just read, keeping the column count in UTF-16 units. */
	advanceDecoded(i: number): number {
		const length = this.decodedLength;
		this.extra += length === 4 ? 2 : length - 1;
		return i + length;
	}

	isNameStartAt(buf: Uint8Array, i: number, end: number): boolean {
		const b = buf[i];
		if (b < 0x80) return NAME_BYTE[b] === 1;
		const c = this.decode(buf, i, end);
		return c >= 0 && isNameStart(c);
	}

	/**
	 * A non-ASCII name character at `buf[i]`: the index after it, `i` when it is none, -1 (with
	 * the problem set) when the bytes are not UTF-8.
	 */
	nameCharacter(buf: Uint8Array, i: number, end: number): number {
		const c = this.decode(buf, i, end);
		if (c < 0) return this.fail(invalidUtf8Message(buf, i, end), i) || -1;
		if (!isNameChar(c)) return i;
		return this.advanceDecoded(i);
	}

	/** Describes the character at `buf[i]` for a message. */
	describeAt(buf: Uint8Array, i: number, end: number): string {
		const b = buf[i];
		if (b < 0x80) return describeChar(b);
		const c = this.decode(buf, i, end);
		return c < 0 ? `the byte 0x${b.toString(16).toUpperCase()}` : describeChar(c);
	}

	/** A white-space byte at `buf[i]` where the grammar allows one. */
	space(b: number, i: number): true {
		if (b === Byte.Newline) this.newline(i);
		return true;
	}

	columnAt(i: number): number {
		return this.base + i - this.lineStart - (this.extra - this.extraAtLineStart) + 1;
	}

	/** The current scanning position, for problems found outside the scanner (e.g. encoding). */
	positionAfterScanned(): { line: number; column: number } {
		return { line: this.line, column: this.columnAt(0) };
	}

	/** Remembers where the markup that starts at `buf[i]` starts. */
	mark(i: number): void {
		this.markLine = this.line;
		this.markColumn = this.columnAt(i);
	}

	fail(message: string, i: number): false {
		this.problem ??= { message, line: this.line, column: this.columnAt(i) };
		return false;
	}

	/** `fail` for functions that return an index: returns `end`, which stops the scan. */
	failAt(message: string, i: number, end: number): number {
		this.fail(message, i);
		return end;
	}

	failAtMark(message: string): XmlProblem {
		this.problem ??= { message, line: this.markLine, column: this.markColumn };
		return this.problem;
	}
}
