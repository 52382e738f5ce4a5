import { describeChar, isNameChar, isNameStart, isXmlChar } from '../chars';
import { readDoctype, type Doctype } from './doctype';
import { Byte, Bytes } from './bytes';
import { DoctypeCollector } from './doctypeCollector';
import { EntityResolver, PREDEFINED_ENTITIES } from './entities';
import { describeState, invalidUtf8Message, positionAfter } from './messages';
import { State, Where } from './states';

/** Checks an entity's replacement text as content (balanced elements, references). */
function checkEntityContent(text: string, resolver: EntityResolver): string | null {
	const scanner = new Scanner(ScanMode.Content, resolver);
	const bytes = Buffer.from(text, 'utf8');
	scanner.scan(bytes, 0, bytes.length);
	return scanner.finish()?.message ?? null;
}

/**
 * Where and why a document is not well-formed. Lines and columns count from 1; columns count
 * UTF-16 code units, as most editors do.
 */
export interface XmlProblem {
	message: string;
	line: number;
	column: number;
}

// Byte classes. A 0 in a skip table means "an ordinary byte here": runs of them are passed over
// in a tight loop, which is where a document's bytes mostly are.
function table(stops: number[], stopNonAscii = true): Uint8Array {
	const result = new Uint8Array(256);
	for (let b = 0; b < 0x20; b++) if (b !== 0x09 && b !== 0x0d) result[b] = 1;
	if (stopNonAscii) for (let b = 0x80; b < 0x100; b++) result[b] = 1;
	for (const stop of stops) result[stop] = 1;
	return result;
}
const TEXT_STOPS = table([Byte.Lt, Byte.Amp, Byte.RightBracket]);
const ATTRIBUTE_STOPS = table([Byte.Lt, Byte.Amp, Byte.Quote, Byte.Apostrophe]);
const COMMENT_STOPS = table([Byte.Dash]);
const CDATA_STOPS = table([Byte.RightBracket]);
const PI_STOPS = table([Byte.Question]);
/** 1: ASCII name start character; 2: ASCII name character only. Others are looked up by code point. */
const ASCII_NAME = new Uint8Array(128);
for (let b = 0; b < 128; b++) {
	if (isNameStart(b)) ASCII_NAME[b] = 1;
	else if (isNameChar(b)) ASCII_NAME[b] = 2;
}

/** 1: ASCII name start character; 2: other ASCII name character; 0: anything else. */
const NAME_BYTE = new Uint8Array(256);
NAME_BYTE.set(ASCII_NAME);
const COMMENT_OPEN = Buffer.from('--');
const CDATA_OPEN = Buffer.from('[CDATA[');
const PREDEFINED_NAMES = PREDEFINED_ENTITIES.map((name) => Buffer.from(name));

function startsWith(buf: Uint8Array, i: number, end: number, expected: Uint8Array): boolean {
	if (i + expected.length > end) return false;
	for (let k = 0; k < expected.length; k++) if (buf[i + k] !== expected[k]) return false;
	return true;
}

/** The index after '&amp;', '&lt;', '&gt;', '&quot;' or '&apos;' at `buf[i]`, or 0. */
function predefinedReference(buf: Uint8Array, i: number, end: number): number {
	for (const name of PREDEFINED_NAMES) {
		const semicolon = i + 1 + name.length;
		if (semicolon < end && buf[semicolon] === Byte.Semicolon && startsWith(buf, i + 1, end, name)) return semicolon + 1;
	}
	return 0;
}

const BANG_COMMENT = '--';
const BANG_CDATA = '[CDATA[';
const BANG_DOCTYPE = 'DOCTYPE';
const MAX_NAME_BYTES = 64 * 1024;
const MAX_DOCTYPE_BYTES = 4 * 1024 * 1024;
/** Above this many attributes in one tag, repeated names are found through a set, not by comparison. */
const ATTRIBUTES_COMPARED_DIRECTLY = 8;

function isSpaceByte(b: number): boolean {
	return b === 0x20 || b === 0x0a || b === 0x09 || b === 0x0d;
}


/** What `Scanner` checks: a whole document, or the replacement text of an entity met in content. */
export const enum ScanMode {
	Document,
	Content,
}

/**
 * The well-formedness state machine over UTF-8 bytes, fed chunk by chunk. Multi-byte characters
 * never straddle two chunks (the caller holds an incomplete one back). Memory: the names of the
 * open elements, the attribute names of one tag, the DOCTYPE; never a chunk or a slice of one.
 */
export class Scanner {
	problem: XmlProblem | null = null;
	private state: State;
	private where = Where.Prolog;
	/** Absolute offset of the current chunk's first byte. */
	private base = 0;
	private line = 1;
	private lineStart = 0;
	/** Bytes beyond one UTF-16 unit per character, counted up to the scanning position. */
	private extra = 0;
	private extraAtLineStart = 0;
	// Open elements: their names back to back in `stack`, where each ends, where each started.
	private readonly stack = new Bytes();
	private readonly stackEnds: number[] = [];
	private readonly openLines: number[] = [];
	private readonly openColumns: number[] = [];
	private readonly attributes = new Bytes();
	private readonly attributeEnds: number[] = [];
	private attributeSet: Set<string> | undefined;
	/** A name being read (end tag, reference, processing instruction target, attribute). */
	private readonly scratch = new Bytes();
	private markLine = 1;
	private markColumn = 1;
	private quote = 0;
	private sawSpace = false;
	private referenceInAttribute = false;
	private charRefValue = 0;
	private charRefDigits = 0;
	private counter = 0;
	private bang = '';
	private doctype: DoctypeCollector | undefined;
	private resolver: EntityResolver;
	private rootSeen = false;

	constructor(
		private readonly mode: ScanMode,
		resolver?: EntityResolver,
		private readonly standalone = false,
	) {
		this.resolver = resolver ?? new EntityResolver(null, checkEntityContent);
		this.state = mode === ScanMode.Document ? State.Misc : State.Text;
		if (mode === ScanMode.Content) this.where = Where.Root;
	}

	/** Scans `buf[start, end)`; false once a problem is found. */
	scan(buf: Uint8Array, start: number, end: number): boolean {
		if (this.problem) return false;
		let i = start;
		this.base -= start;
		// Hot states loop over their bytes inline; `continue` re-enters the dispatch.
		while (i < end) {
			switch (this.state) {
				case State.Text: {
					let b = buf[i];
					while (TEXT_STOPS[b] === 0) {
						if (++i === end) break;
						b = buf[i];
					}
					if (i === end) break;
					if (b === Byte.Lt) {
						const after = this.simpleTag(buf, i, end);
						if (after > 0) {
							i = after;
							continue;
						}
						this.mark(i);
						this.state = State.Lt;
						i++;
					} else if (b === Byte.Amp) {
						const after = predefinedReference(buf, i, end);
						if (after > 0) {
							i = after;
							continue;
						}
						this.startReference(i, false);
						i++;
					} else if (b === Byte.RightBracket) {
						this.counter = 1;
						this.state = State.TextBrackets;
						i++;
					} else {
						i = this.character(buf, i, end);
					}
					continue;
				}
				case State.TextBrackets: {
					const b = buf[i];
					if (b === Byte.RightBracket) {
						this.counter++;
						i++;
					} else if (b === Byte.Gt && this.counter >= 2) {
						return this.fail("']]>' is not allowed in text", i - 2);
					} else {
						this.state = State.Text;
					}
					continue;
				}
				case State.AttrValue: {
					let b = buf[i];
					while (ATTRIBUTE_STOPS[b] === 0) {
						if (++i === end) break;
						b = buf[i];
					}
					if (i === end) break;
					if (b === this.quote) {
						this.state = State.AfterAttrValue;
						i++;
					} else if (b === Byte.Quote || b === Byte.Apostrophe) {
						i++;
					} else if (b === Byte.Lt) {
						return this.fail(`'<' is not allowed in the value of the attribute '${this.attributeName()}'`, i);
					} else if (b === Byte.Amp) {
						this.startReference(i, true);
						i++;
					} else {
						i = this.character(buf, i, end);
					}
					continue;
				}
				case State.StartName:
				case State.AttrName:
				case State.EndName:
				case State.PiTarget:
				case State.EntityName: {
					const from = i;
					let b = buf[i];
					if ((this.state === State.EndName || this.state === State.PiTarget) && this.scratch.length === 0 && !this.isNameStartAt(buf, i, end)) {
						return this.problem ? false : this.failNoName(buf, i, end, this.state);
					}
					while (b < 0x80 && ASCII_NAME[b] !== 0) {
						if (++i === end) break;
						b = buf[i];
					}
					if (i < end && b >= 0x80) {
						const next = this.nameCharacter(buf, i, end);
						if (next < 0) return false;
						if (next !== i) {
							this.nameBytes().append(buf, from, next);
							i = next;
							if (!this.nameLengthOk()) return false;
							continue;
						}
					}
					this.nameBytes().append(buf, from, i);
					if (!this.nameLengthOk()) return false;
					if (i === end) break;
					if (!this.endName(buf, i)) return false;
					continue;
				}
				case State.Comment: {
					let b = buf[i];
					while (COMMENT_STOPS[b] === 0) {
						if (++i === end) break;
						b = buf[i];
					}
					if (i === end) break;
					if (b === Byte.Dash) {
						this.state = State.CommentDash;
						i++;
					} else {
						i = this.character(buf, i, end);
					}
					continue;
				}
				case State.CData: {
					let b = buf[i];
					while (CDATA_STOPS[b] === 0) {
						if (++i === end) break;
						b = buf[i];
					}
					if (i === end) break;
					if (b === Byte.RightBracket) {
						this.counter = 1;
						this.state = State.CDataBrackets;
						i++;
					} else {
						i = this.character(buf, i, end);
					}
					continue;
				}
				case State.PiBody:
				case State.Declaration: {
					let b = buf[i];
					while (PI_STOPS[b] === 0) {
						if (++i === end) break;
						b = buf[i];
					}
					if (i === end) break;
					if (b === Byte.Question) {
						this.state = this.state === State.PiBody ? State.PiQuestion : State.DeclarationQuestion;
						i++;
					} else {
						i = this.character(buf, i, end);
					}
					continue;
				}
				case State.Doctype: {
					const collector = this.doctype as DoctypeCollector;
					const from = i;
					i = collector.feed(buf, i, end, this);
					if (this.problem) return false;
					if (collector.bytes.length + (i - from) > MAX_DOCTYPE_BYTES) {
						return this.fail(`The DOCTYPE is longer than ${MAX_DOCTYPE_BYTES} bytes, more than this check reads`, i);
					}
					collector.bytes.append(buf, from, i);
					if (collector.done) {
						this.state = State.Misc;
						if (!this.learnDoctype(collector)) return false;
					}
					continue;
				}
				default:
					if (!this.step(buf, i, end)) return false;
					i = this.nextIndex;
			}
		}
		this.base += end;
		return this.problem === null;
	}

	/** Index after the byte(s) the last `step` consumed. */
	private nextIndex = 0;

	/** The states that take a byte at a time. Sets `nextIndex`; false once a problem is found. */
	private step(buf: Uint8Array, i: number, end: number): boolean {
		const b = buf[i];
		this.nextIndex = i + 1;
		switch (this.state) {
			case State.Misc:
				if (b === Byte.Lt) {
					this.mark(i);
					this.state = State.Lt;
					return true;
				}
				if (isSpaceByte(b)) return this.space(b, i);
				if (b >= 0x80 && this.decode(buf, i, end) < 0) return this.fail(invalidUtf8Message(buf, i, end), i);
				if (this.where === Where.Prolog) {
					return this.fail(`Text is not allowed before the root element, found ${this.describeAt(buf, i, end)}`, i);
				}
				return this.fail(`Text is not allowed after the root element, found ${this.describeAt(buf, i, end)}`, i);
			case State.Lt:
				return this.afterLt(buf, i, end);
			case State.Bang:
				return this.afterBang(b, i);
			case State.CommentDash:
				if (b === Byte.Dash) {
					this.state = State.CommentDashes;
					return true;
				}
				this.state = State.Comment;
				this.nextIndex = i;
				return true;
			case State.CommentDashes:
				if (b !== Byte.Gt) return this.fail("'--' is not allowed inside a comment", i - 2);
				this.state = this.afterMarkup();
				return true;
			case State.CDataBrackets:
				if (b === Byte.RightBracket) {
					this.counter++;
					return true;
				}
				if (b === Byte.Gt && this.counter >= 2) {
					this.state = State.Text;
					return true;
				}
				this.state = State.CData;
				this.nextIndex = i;
				return true;
			case State.PiSpace:
				if (b === Byte.Question) {
					this.state = State.PiQuestion;
					return true;
				}
				if (!isSpaceByte(b)) return this.fail(`A space is needed after the processing instruction target, found ${this.describeAt(buf, i, end)}`, i);
				this.state = State.PiBody;
				return this.space(b, i);
			case State.PiQuestion:
			case State.DeclarationQuestion:
				if (b === Byte.Gt) {
					this.state = this.afterMarkup();
				} else if (b !== Byte.Question) {
					this.state = this.state === State.PiQuestion ? State.PiBody : State.Declaration;
					this.nextIndex = i;
				}
				return true;
			case State.InTag:
				return this.inTag(buf, i, end);
			case State.AfterAttrName:
				if (isSpaceByte(b)) return this.space(b, i);
				if (b !== Byte.Equals) return this.fail(`The attribute '${this.attributeName()}' has no value`, i);
				if (!this.attributeIsNew()) return this.fail(`The attribute '${this.attributeName()}' is repeated`, i);
				this.state = State.BeforeAttrValue;
				return true;
			case State.BeforeAttrValue:
				if (isSpaceByte(b)) return this.space(b, i);
				if (b !== Byte.Quote && b !== Byte.Apostrophe) return this.fail(`The value of the attribute '${this.attributeName()}' must be in quotes`, i);
				this.quote = b;
				this.state = State.AttrValue;
				return true;
			case State.AfterAttrValue:
				this.state = State.InTag;
				this.sawSpace = false;
				if (isSpaceByte(b) || b === Byte.Gt || b === Byte.Slash) return this.inTag(buf, i, end);
				return this.fail(`A space is needed before another attribute, found ${this.describeAt(buf, i, end)}`, i);
			case State.EmptyEnd:
				if (b !== Byte.Gt) return this.fail(`'>' expected after '/' in a tag, found ${this.describeAt(buf, i, end)}`, i);
				this.openElement();
				this.closeElement();
				return true;
			case State.AfterEndName:
				if (isSpaceByte(b)) return this.space(b, i);
				if (b !== Byte.Gt) return this.fail(`'>' expected to end the closing tag '${this.scratch.text()}', found ${this.describeAt(buf, i, end)}`, i);
				return this.endTag();
			case State.Reference:
				if (b === Byte.Hash) {
					this.state = State.CharRefStart;
					return true;
				}
				if (!this.isNameStartAt(buf, i, end)) return this.problem ? false : !this.failAtMark("'&' must start an entity reference such as '&amp;'");
				this.scratch.length = 0;
				this.state = State.EntityName;
				this.nextIndex = i;
				return true;
			case State.CharRefStart:
				this.charRefValue = 0;
				this.charRefDigits = 0;
				if (b === 0x78) {
					this.state = State.CharRefHex;
					return true;
				}
				this.state = State.CharRefDecimal;
				this.nextIndex = i;
				return true;
			case State.CharRefDecimal:
			case State.CharRefHex:
				return this.charRef(b);
		}
		return true;
	}

	/** Ends the input; the first problem, or null. */
	finish(): XmlProblem | null {
		if (this.problem) return this.problem;
		const state = this.state;
		if (this.mode === ScanMode.Content) {
			if (state !== State.Text && state !== State.TextBrackets) return this.failAtMark(`It ends inside ${describeState(state)}`);
			if (this.stackEnds.length > 0) return this.failOpen('is not closed inside it');
			return null;
		}
		if (state !== State.Misc) {
			if (state === State.Text || state === State.TextBrackets) return this.failOpen('is never closed');
			return this.failAtMark(`The document ends inside ${describeState(state)}`);
		}
		if (!this.rootSeen) {
			this.problem = { message: 'The document has no root element', line: this.line, column: this.columnAt(0) };
		}
		return this.problem;
	}

	/** The current scanning position, for problems found outside the scanner (e.g. encoding). */
	positionAfterScanned(): { line: number; column: number } {
		return { line: this.line, column: this.columnAt(0) };
	}

	/** For `DoctypeCollector`: a line break at absolute offset `base + i`. */
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
			else if (b !== 0x0d && b !== 0x09) return this.failAt(`The character ${describeChar(b)} is not allowed in XML`, i, end);
			return i + 1;
		}
		const c = this.decode(buf, i, end);
		if (c < 0) return this.failAt(invalidUtf8Message(buf, i, end), i, end);
		if (!isXmlChar(c)) return this.failAt(`The character ${describeChar(c)} is not allowed in XML`, i, end);
		return this.advanceDecoded(i);
	}

	private decodedLength = 0;

	/** The code point of the UTF-8 sequence at `buf[i]`, or -1 when it is not valid UTF-8. */
	private decode(buf: Uint8Array, i: number, end: number): number {
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
	private advanceDecoded(i: number): number {
		const length = this.decodedLength;
		this.extra += length === 4 ? 2 : length - 1;
		return i + length;
	}

	/**
	 * A non-ASCII name character at `buf[i]`: the index after it, `i` when it is none, -1 (with
	 * the problem set) when the bytes are not UTF-8.
	 */
	private nameCharacter(buf: Uint8Array, i: number, end: number): number {
		const c = this.decode(buf, i, end);
		if (c < 0) return this.fail(invalidUtf8Message(buf, i, end), i) || -1;
		if (!isNameChar(c)) return i;
		return this.advanceDecoded(i);
	}

	/** Describes the character at `buf[i]` for a message. */
	private describeAt(buf: Uint8Array, i: number, end: number): string {
		const b = buf[i];
		if (b < 0x80) return describeChar(b);
		const c = this.decode(buf, i, end);
		return c < 0 ? `the byte 0x${b.toString(16).toUpperCase()}` : describeChar(c);
	}

	private space(b: number, i: number): boolean {
		if (b === Byte.Newline) this.newline(i);
		if (this.state === State.InTag) this.sawSpace = true;
		return true;
	}

	private columnAt(i: number): number {
		return this.base + i - this.lineStart - (this.extra - this.extraAtLineStart) + 1;
	}

	private mark(i: number): void {
		this.markLine = this.line;
		this.markColumn = this.columnAt(i);
	}

	fail(message: string, i: number): false {
		this.problem ??= { message, line: this.line, column: this.columnAt(i) };
		return false;
	}

	/** `fail` for functions that return an index: returns `end`, which stops the scan. */
	private failAt(message: string, i: number, end: number): number {
		this.fail(message, i);
		return end;
	}

	private failAtMark(message: string): XmlProblem {
		this.problem ??= { message, line: this.markLine, column: this.markColumn };
		return this.problem;
	}

	private failOpen(what: string): XmlProblem {
		const depth = this.stackEnds.length;
		this.problem ??= {
			message: `The element '${this.openName(depth - 1)}' ${what}`,
			line: this.openLines[depth - 1],
			column: this.openColumns[depth - 1],
		};
		return this.problem;
	}

	private afterMarkup(): State {
		return this.where === Where.Root && (this.stackEnds.length > 0 || this.mode === ScanMode.Content) ? State.Text : State.Misc;
	}

	private afterLt(buf: Uint8Array, i: number, end: number): boolean {
		const b = buf[i];
		if (b === Byte.Slash || b === Byte.Question) {
			this.state = b === Byte.Slash ? State.EndName : State.PiTarget;
			this.scratch.length = 0;
			return true;
		}
		if (b === Byte.Bang) {
			if (startsWith(buf, i + 1, end, COMMENT_OPEN)) {
				this.state = State.Comment;
				this.nextIndex = i + 3;
			} else if (this.where === Where.Root && startsWith(buf, i + 1, end, CDATA_OPEN)) {
				this.state = State.CData;
				this.nextIndex = i + 1 + CDATA_OPEN.length;
			} else {
				this.state = State.Bang;
				this.bang = '';
			}
			return true;
		}
		if (this.where === Where.Epilog) {
			if (this.isNameStartAt(buf, i, end)) return this.fail('Only one root element is allowed', i - 1);
		}
		this.stackEnds.push(this.stack.length);
		this.attributes.length = 0;
		this.attributeEnds.length = 0;
		this.attributeSet = undefined;
		if (!this.isNameStartAt(buf, i, end)) {
			if (this.problem) return false;
			return this.fail(`'<' must start a tag, comment, CDATA section or processing instruction; found ${this.describeAt(buf, i, end)}`, i);
		}
		this.state = State.StartName;
		this.nextIndex = i;
		return true;
	}

	/**
	 * The common case of a tag inside the root element, read in one go: an ASCII start tag whose
	 * attribute values hold no reference (at most eight attributes), or an ASCII end tag that
	 * matches, all within this chunk and on one line. Returns the index after it, or 0 to read it
	 * through the state machine (which also words any problem).
	 */
	private simpleTag(buf: Uint8Array, i: number, end: number): number {
		let j = i + 1;
		if (j >= end) return 0;
		if (buf[j] === Byte.Slash) {
			const depth = this.stackEnds.length;
			if (depth === 0) return 0;
			const start = this.stackEnds[depth - 1];
			const length = this.stack.length - start;
			const data = this.stack.data;
			j++;
			if (j + length >= end) return 0;
			for (let k = 0; k < length; k++) if (buf[j + k] !== data[start + k]) return 0;
			j += length;
			while (j < end && (buf[j] === 0x20 || buf[j] === 0x09)) j++;
			if (j >= end || buf[j] !== Byte.Gt) return 0;
			this.closeElement();
			return j + 1;
		}
		if (NAME_BYTE[buf[j]] !== 1) return 0;
		const nameStart = j;
		while (++j < end && NAME_BYTE[buf[j]] !== 0);
		const nameEnd = j;
		const starts = this.simpleAttributeStarts;
		const ends = this.simpleAttributeEnds;
		let count = 0;
		for (;;) {
			const spaceStart = j;
			while (j < end && (buf[j] === 0x20 || buf[j] === 0x09)) j++;
			if (j >= end) return 0;
			let b = buf[j];
			if (b === Byte.Gt || (b === Byte.Slash && j + 1 < end && buf[j + 1] === Byte.Gt)) {
				this.mark(i);
				this.stackEnds.push(this.stack.length);
				this.stack.append(buf, nameStart, nameEnd);
				this.openElement();
				if (b === Byte.Gt) return j + 1;
				this.closeElement();
				return j + 2;
			}
			if (j === spaceStart || NAME_BYTE[b] !== 1 || count === ATTRIBUTES_COMPARED_DIRECTLY) return 0;
			const attributeStart = j;
			while (++j < end && NAME_BYTE[buf[j]] !== 0);
			const attributeEnd = j;
			const length = attributeEnd - attributeStart;
			for (let k = 0; k < count; k++) {
				if (ends[k] - starts[k] !== length) continue;
				let same = true;
				for (let m = 0; same && m < length; m++) same = buf[starts[k] + m] === buf[attributeStart + m];
				if (same) return 0;
			}
			starts[count] = attributeStart;
			ends[count] = attributeEnd;
			count++;
			if (j + 1 >= end || buf[j] !== Byte.Equals) return 0;
			const quote = buf[++j];
			if (quote !== Byte.Quote && quote !== Byte.Apostrophe) return 0;
			j++;
			for (;;) {
				if (j >= end) return 0;
				b = buf[j];
				if (ATTRIBUTE_STOPS[b] === 0) {
					j++;
				} else if (b === quote) {
					break;
				} else if (b === Byte.Quote || b === Byte.Apostrophe) {
					j++;
				} else {
					return 0;
				}
			}
			j++;
		}
	}

	private readonly simpleAttributeStarts: number[] = [];
	private readonly simpleAttributeEnds: number[] = [];

	private isNameStartAt(buf: Uint8Array, i: number, end: number): boolean {
		const b = buf[i];
		if (b < 0x80) return ASCII_NAME[b] === 1;
		const c = this.decode(buf, i, end);
		return c >= 0 && isNameStart(c);
	}

	private failNoName(buf: Uint8Array, i: number, end: number, state: State): boolean {
		if (state === State.EndName) return this.fail(`An element name is expected after '</', found ${this.describeAt(buf, i, end)}`, i);
		return this.fail(`A processing instruction needs a target name, found ${this.describeAt(buf, i, end)}`, i);
	}

	private nameBytes(): Bytes {
		switch (this.state) {
			case State.StartName:
				return this.stack;
			case State.AttrName:
				return this.attributes;
			default:
				return this.scratch;
		}
	}

	private nameLengthOk(): boolean {
		const bytes = this.nameBytes();
		const start = this.state === State.StartName ? this.stackEnds[this.stackEnds.length - 1] : this.state === State.AttrName ? this.attributeStart() : 0;
		if (bytes.length - start <= MAX_NAME_BYTES) return true;
		return this.fail(`A name is longer than ${MAX_NAME_BYTES} bytes`, 0);
	}

	/** The name that was being read ends before `buf[i]`. */
	private endName(buf: Uint8Array, i: number): boolean {
		const b = buf[i];
		this.nextIndex = i;
		switch (this.state) {
			case State.StartName:
				this.state = State.InTag;
				this.sawSpace = false;
				return true;
			case State.AttrName:
				this.attributeEnds.push(this.attributes.length);
				this.state = State.AfterAttrName;
				return true;
			case State.EndName:
				this.state = State.AfterEndName;
				return true;
			case State.PiTarget:
				return this.endPiTarget();
			default:
				// An entity name.
				if (b !== Byte.Semicolon) return !this.failAtMark("'&' must start an entity reference such as '&amp;'");
				this.nextIndex = i + 1;
				return this.endEntityReference();
		}
	}

	private endPiTarget(): boolean {
		const target = this.scratch;
		const isXml =
			target.length === 3 && (target.data[0] | 0x20) === 0x78 && (target.data[1] | 0x20) === 0x6d && (target.data[2] | 0x20) === 0x6c;
		if (isXml) {
			const atStart = this.mode === ScanMode.Document && this.markLine === 1 && this.markColumn === 1 && this.where === Where.Prolog && !this.declarationSeen;
			if (!atStart || target.text() !== 'xml') {
				return !this.failAtMark(
					target.text() === 'xml'
						? 'The XML declaration is only allowed at the very start of the document'
						: `The processing instruction target '${target.text()}' is reserved`,
				);
			}
			// Read and checked before the scan (it decides the encoding): passed over here.
			this.declarationSeen = true;
			this.state = State.Declaration;
			return true;
		}
		this.state = State.PiSpace;
		return true;
	}

	private declarationSeen = false;

	private inTag(buf: Uint8Array, i: number, end: number): boolean {
		const b = buf[i];
		this.nextIndex = i + 1;
		if (isSpaceByte(b)) {
			this.sawSpace = true;
			if (b === Byte.Newline) this.newline(i);
			return true;
		}
		if (b === Byte.Gt) {
			this.openElement();
			return true;
		}
		if (b === Byte.Slash) {
			this.state = State.EmptyEnd;
			return true;
		}
		if (this.isNameStartAt(buf, i, end)) {
			if (!this.sawSpace) return this.fail(`A space is needed before the attribute, found ${this.describeAt(buf, i, end)}`, i);
			this.state = State.AttrName;
			this.nextIndex = i;
			return true;
		}
		if (this.problem) return false;
		return this.fail(`Unexpected ${this.describeAt(buf, i, end)} in a tag`, i);
	}

	private attributeStart(): number {
		const count = this.attributeEnds.length;
		return count === 0 ? 0 : this.attributeEnds[count - 1];
	}

	/** The name of the attribute being read, or whose value is being read. */
	private attributeName(): string {
		const count = this.attributeEnds.length;
		return this.attributes.text(count < 2 ? 0 : this.attributeEnds[count - 2], this.attributeEnds[count - 1]);
	}

	/** Whether the attribute just named is not yet in its tag: linear in attributes per tag. */
	private attributeIsNew(): boolean {
		const count = this.attributeEnds.length;
		const ends = this.attributeEnds;
		const data = this.attributes.data;
		const start = count < 2 ? 0 : ends[count - 2];
		const length = ends[count - 1] - start;
		if (count <= ATTRIBUTES_COMPARED_DIRECTLY) {
			for (let k = 0, otherStart = 0; k < count - 1; otherStart = ends[k], k++) {
				if (ends[k] - otherStart !== length) continue;
				let same = true;
				for (let j = 0; j < length; j++) {
					if (data[otherStart + j] !== data[start + j]) {
						same = false;
						break;
					}
				}
				if (same) return false;
			}
			return true;
		}
		if (!this.attributeSet) {
			this.attributeSet = new Set();
			for (let k = 0, otherStart = 0; k < count - 1; otherStart = ends[k], k++) this.attributeSet.add(this.attributes.text(otherStart, ends[k]));
		}
		const name = this.attributes.text(start, start + length);
		if (this.attributeSet.has(name)) return false;
		this.attributeSet.add(name);
		return true;
	}

	private openElement(): void {
		this.openLines.push(this.markLine);
		this.openColumns.push(this.markColumn);
		this.where = Where.Root;
		this.rootSeen = true;
		this.state = State.Text;
	}

	private closeElement(): void {
		this.stack.length = this.stackEnds.pop() as number;
		this.openLines.pop();
		this.openColumns.pop();
		const depth = this.stackEnds.length;
		if (depth === 0 && this.mode === ScanMode.Document) {
			this.where = Where.Epilog;
			this.state = State.Misc;
		} else {
			this.state = State.Text;
		}
	}

	private openName(index: number): string {
		const start = this.stackEnds[index];
		const end = index + 1 < this.stackEnds.length ? this.stackEnds[index + 1] : this.stack.length;
		return this.stack.text(start, end);
	}

	private endTag(): boolean {
		const depth = this.stackEnds.length;
		const name = this.scratch;
		if (depth === 0) {
			const where = this.mode === ScanMode.Content ? 'in the entity' : '';
			return !this.failAtMark(`The closing tag '${name.text()}' has no opening tag${where ? ` ${where}` : ''}`);
		}
		const start = this.stackEnds[depth - 1];
		const length = this.stack.length - start;
		let same = length === name.length;
		for (let k = 0; same && k < length; k++) same = this.stack.data[start + k] === name.data[k];
		if (!same) {
			return !this.failAtMark(
				`Expected the closing tag '${this.openName(depth - 1)}' (opened at line ${this.openLines[depth - 1]}, column ${this.openColumns[depth - 1]}), found '${name.text()}'`,
			);
		}
		this.closeElement();
		return true;
	}

	private afterBang(b: number, i: number): boolean {
		this.bang += String.fromCharCode(b);
		const bang = this.bang;
		if (bang === BANG_COMMENT) {
			this.state = State.Comment;
			return true;
		}
		if (bang === BANG_CDATA) {
			if (this.where !== Where.Root) return !this.failAtMark('A CDATA section is only allowed inside the root element');
			this.state = State.CData;
			return true;
		}
		if (bang === BANG_DOCTYPE) {
			if (this.mode === ScanMode.Content || this.where !== Where.Prolog || this.doctype) {
				return !this.failAtMark('A DOCTYPE is only allowed once, before the root element');
			}
			this.doctype = new DoctypeCollector(this.markLine, this.markColumn);
			this.state = State.Doctype;
			return true;
		}
		if (BANG_COMMENT.startsWith(bang) || BANG_CDATA.startsWith(bang) || BANG_DOCTYPE.startsWith(bang)) return true;
		if (bang.length === 2 && bang[0] === '-') return this.fail("'<!-' must be followed by '-' to start a comment", i);
		return this.fail(`'<!' must start a comment, CDATA section or DOCTYPE, found '<!${bang}'`, i);
	}

	private learnDoctype(collector: DoctypeCollector): boolean {
		const text = `<!DOCTYPE${collector.bytes.text()}`;
		const result = readDoctype(text, this.standalone);
		if ('problem' in result) return this.failInDoctype(collector, text, result.problem.offset, result.problem.message);
		const doctype: Doctype = result.doctype;
		this.resolver = new EntityResolver(doctype, checkEntityContent);
		for (const { value, offset } of doctype.defaults) {
			const problem = this.resolver.attributeValueProblem(value);
			if (problem) return this.failInDoctype(collector, text, offset, problem);
		}
		return true;
	}

	private failInDoctype(collector: DoctypeCollector, text: string, offset: number, message: string): false {
		this.problem ??= { message, ...positionAfter(text, offset, collector.line, collector.column) };
		return false;
	}

	private startReference(i: number, inAttribute: boolean): void {
		this.mark(i);
		this.referenceInAttribute = inAttribute;
		this.state = State.Reference;
	}

	private referenceEnded(): void {
		this.state = this.referenceInAttribute ? State.AttrValue : State.Text;
	}

	private endEntityReference(): boolean {
		if (isPredefinedEntity(this.scratch)) {
			this.referenceEnded();
			return true;
		}
		const name = this.scratch.text();
		const problem = this.referenceInAttribute ? this.resolver.attributeProblem(name) : this.resolver.contentProblem(name);
		if (problem) return !this.failAtMark(problem);
		this.referenceEnded();
		return true;
	}

	private charRef(b: number): boolean {
		const hex = this.state === State.CharRefHex;
		if (b === Byte.Semicolon && this.charRefDigits > 0) {
			const value = this.charRefValue;
			if (!isXmlChar(value)) {
				return !this.failAtMark(`'&#${hex ? 'x' : ''}${hex ? value.toString(16).toUpperCase() : value};' refers to a character XML does not allow`);
			}
			this.referenceEnded();
			return true;
		}
		let digit: number;
		if (b >= 0x30 && b <= 0x39) digit = b - 0x30;
		else if (hex && b >= 0x61 && b <= 0x66) digit = b - 0x57;
		else if (hex && b >= 0x41 && b <= 0x46) digit = b - 0x37;
		else return !this.failAtMark("A character reference holds only digits, as in '&#65;' or '&#x41;'");
		// Anything above the last code point is as wrong as the last code point plus one.
		this.charRefValue = Math.min(this.charRefValue * (hex ? 16 : 10) + digit, 0x110000);
		this.charRefDigits++;
		return true;
	}
}

function isPredefinedEntity(name: Bytes): boolean {
	for (const entity of PREDEFINED_NAMES) {
		if (entity.length !== name.length) continue;
		let same = true;
		for (let k = 0; same && k < entity.length; k++) same = entity[k] === name.data[k];
		if (same) return true;
	}
	return false;
}
