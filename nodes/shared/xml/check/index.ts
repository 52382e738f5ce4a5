import { TextDecoder } from 'util';

import {
	describeChar,
	isAllowedCodePoint,
	isDigit,
	isForbiddenChar,
	isNameChar,
	isNameStart,
	isSpace,
} from '../chars';

/**
 * Where and why a document is not well-formed. Lines and columns count from 1; columns count
 * UTF-16 code units, as most editors do.
 */
export interface XmlProblem {
	message: string;
	line: number;
	column: number;
}

const enum State {
	Text,
	Lt,
	Bang,
	Comment,
	CData,
	PiTarget,
	PiBody,
	Doctype,
	OpenName,
	InTag,
	AttrName,
	AfterAttrName,
	BeforeAttrValue,
	AttrValue,
	AfterAttrValue,
	SelfClose,
	CloseName,
	AfterCloseName,
	Reference,
}

const enum Where {
	Prolog,
	Root,
	Epilog,
}

const PREDEFINED_ENTITIES = new Set(['amp', 'lt', 'gt', 'quot', 'apos']);
/** Names longer than this are refused rather than collected without bound. */
const MAX_NAME_LENGTH = 10_000;
/** The DOCTYPE is kept (to learn its entity names) up to this size. */
const MAX_DOCTYPE_LENGTH = 1 << 20;
/**
 * Bytes decoded at a time. The text of a slice stays well below V8's large-object size, so it dies
 * young: larger strings would go straight to the old generation and pile up until a full GC.
 */
const SLICE_BYTES = 16 * 1024;

const CDATA_OPEN = '[CDATA[';
// Each stops at a character XML forbids or a character that matters in its state.
/** ASCII name characters, taken in runs; others go through `isNameChar` one by one. */
const NAME_RUN = /[A-Za-z0-9_:.-]+/y;
const SKIP_TEXT = /[<&\]\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/g;
const SKIP_ATTRIBUTE_VALUE = /["'<&\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/g;
const SKIP_COMMENT = /[-\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/g;
const SKIP_CDATA = /[\]\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/g;
const SKIP_PROCESSING_INSTRUCTION = /[?\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/g;
const DOCTYPE_OPEN = 'DOCTYPE';

/**
 * A streaming well-formedness check (XML 1.0): one element root, balanced and properly nested
 * tags, names, quoted and unique attributes, comments, CDATA sections, processing instructions,
 * a DOCTYPE before the root, entity and character references, characters XML allows. Memory is
 * the open-element stack, whatever the document's size. Entities are never expanded and nothing
 * external is fetched: references are only checked for being declared.
 */
export class XmlWellFormednessChecker {
	private state = State.Text;
	private where = Where.Prolog;
	// Lines are counted lazily, only up to the positions that are asked for (tag starts, problems),
	// so that runs of text are never looked at character by character.
	private chunk = '';
	private pos = 0;
	private line = 1;
	/** Index in `chunk` where the current line starts; negative when it started in an earlier chunk. */
	private lineStart = 0;
	private lineCursor = 0;
	private started = false;
	private problemFound: XmlProblem | null = null;
	private decoder: TextDecoder | undefined;
	private head: Buffer | undefined;
	// The open elements, kept in parallel arrays: no object per element.
	private readonly openNames: string[] = [];
	private readonly openLines: number[] = [];
	private readonly openColumns: number[] = [];
	// A name being read is taken out of the chunk in one slice when it ends (plus what an earlier
	// chunk held of it): no string per character.
	private collecting = false;
	private nameStart = 0;
	private namePrefix = '';
	/** Attribute, closing-tag, reference or processing-instruction name last read. */
	private name = '';
	/** Name of the element whose start tag is being read (`name` then holds attribute names). */
	private element = '';
	private readonly attributeNames: string[] = [];
	/** Kind of the reference being read: named, '#' read, decimal, hexadecimal. */
	private referenceKind = 0;
	private quote = 0;
	private markLine = 0;
	private markColumn = 0;
	private bang = '';
	private dashes = 0;
	private brackets = 0;
	private sawSpace = false;
	private referenceInAttribute = false;
	private doctype = '';
	private doctypeDepth = 0;
	private doctypeQuote = 0;
	private readonly declaredEntities = new Set<string>();
	private anyEntityAllowed = false;
	private elementsSeen = false;

	/** The first problem found so far, or null. */
	get problem(): XmlProblem | null {
		return this.problemFound;
	}

	/** Feeds the next piece of the document; bytes are decoded as the document declares. */
	write(chunk: Buffer | string): this {
		if (this.problemFound) return this;
		if (typeof chunk === 'string') {
			this.scan(chunk);
			return this;
		}
		if (!this.decoder) {
			// The encoding is decided on the first bytes: a byte-order mark or the XML declaration.
			this.head = this.head ? Buffer.concat([this.head, chunk]) : chunk;
			if (this.head.length < 256) return this;
			chunk = this.head;
			this.head = undefined;
			this.decoder = pickDecoder(chunk);
		}
		for (let offset = 0; offset < chunk.length && !this.problemFound; offset += SLICE_BYTES) {
			this.scan(this.decoder.decode(chunk.subarray(offset, offset + SLICE_BYTES), { stream: true }));
		}
		return this;
	}

	/** Ends the document and returns its first problem, or null when it is well-formed. */
	end(): XmlProblem | null {
		if (this.problemFound) return this.problemFound;
		if (this.head) {
			const head = this.head;
			this.head = undefined;
			this.decoder = pickDecoder(head);
			this.scan(this.decoder.decode(head, { stream: true }));
		}
		if (this.decoder && !this.problemFound) this.scan(this.decoder.decode());
		if (this.problemFound) return this.problemFound;
		if (this.state !== State.Text) {
			return this.fail(`The document ends inside ${this.describeState()}`, this.markLine, this.markColumn);
		}
		const depth = this.openNames.length;
		if (depth > 0) {
			return this.fail(
				`The element '${this.openNames[depth - 1]}' is never closed`,
				this.openLines[depth - 1],
				this.openColumns[depth - 1],
			);
		}
		if (!this.elementsSeen) return this.fail('The document has no root element', this.line, Math.max(1, -this.lineStart));
		return null;
	}

	private describeState(): string {
		switch (this.state) {
			case State.Comment:
				return 'a comment';
			case State.CData:
				return 'a CDATA section';
			case State.PiTarget:
			case State.PiBody:
				return 'a processing instruction';
			case State.Doctype:
				return 'the DOCTYPE';
			case State.Reference:
				return 'an entity reference';
			case State.AttrValue:
				return 'an attribute value';
			default:
				return 'a tag';
		}
	}

	private fail(message: string, line?: number, column?: number): XmlProblem {
		if (line === undefined || column === undefined) {
			column = this.columnAt(this.pos);
			line = this.line;
		}
		this.problemFound ??= { message, line, column };
		return this.problemFound;
	}

	private mark(): void {
		this.markColumn = this.columnAt(this.pos);
		this.markLine = this.line;
	}

	/** Column of index `position` of the current chunk; `line` is brought up to it as well. */
	private columnAt(position: number): number {
		for (;;) {
			const newline = this.chunk.indexOf('\n', this.lineCursor);
			if (newline === -1 || newline >= position) break;
			this.line++;
			this.lineStart = newline + 1;
			this.lineCursor = newline + 1;
		}
		this.lineCursor = Math.max(this.lineCursor, position);
		return position - this.lineStart + 1;
	}

	private scan(text: string): void {
		const length = text.length;
		this.chunk = text;
		this.lineStart = 0;
		this.lineCursor = 0;
		let i = 0;
		if (!this.started && length > 0) {
			this.started = true;
			if (text.charCodeAt(0) === 0xfeff) i = this.lineStart = 1;
		}
		while (i < length) {
			if (this.collecting && this.state !== State.Reference && this.state !== State.PiTarget) {
				NAME_RUN.lastIndex = i;
				if (NAME_RUN.test(text)) {
					i = NAME_RUN.lastIndex;
					if (this.nameTooLong(i)) {
						this.pos = i - 1;
						this.fail(`A name is longer than ${MAX_NAME_LENGTH} characters`);
						break;
					}
					continue;
				}
			}
			// Runs of ordinary characters inside text, attribute values, comments, CDATA and
			// processing instructions are skipped by a regular expression: most of a document.
			const skip = this.skipPattern();
			if (skip) {
				skip.lastIndex = i;
				if (!skip.test(text)) break;
				i = skip.lastIndex - 1;
			}
			this.pos = i;
			const c = text.charCodeAt(i++);
			if (isForbiddenChar(c)) {
				this.fail(`The character ${describeChar(c)} is not allowed in XML`);
				break;
			}
			if (!this.step(c)) break;
		}
		// Carries the line count and a name being read over to the next chunk.
		this.columnAt(length);
		if (this.collecting) {
			this.namePrefix += text.slice(this.nameStart);
			this.nameStart = 0;
		}
		this.lineStart -= length;
		this.chunk = '';
	}

	private skipPattern(): RegExp | undefined {
		switch (this.state) {
			case State.Text:
				return this.where === Where.Root && this.brackets === 0 ? SKIP_TEXT : undefined;
			case State.AttrValue:
				return SKIP_ATTRIBUTE_VALUE;
			case State.Comment:
				return this.dashes === 0 ? SKIP_COMMENT : undefined;
			case State.CData:
				return this.brackets === 0 ? SKIP_CDATA : undefined;
			case State.PiBody:
				return this.dashes === 0 ? SKIP_PROCESSING_INSTRUCTION : undefined;
			default:
				return undefined;
		}
	}

	/** Advances the state machine by one character; false once a problem is found. */
	private step(c: number): boolean {
		switch (this.state) {
			case State.Text:
				return this.text(c);
			case State.Lt:
				return this.afterLt(c);
			case State.Bang:
				return this.afterBang(c);
			case State.Comment:
				if (c === 0x2d) {
					if (this.dashes === 2) return !this.fail("'--' is not allowed inside a comment");
					this.dashes++;
				} else if (this.dashes === 2) {
					if (c !== 0x3e) return !this.fail("'--' is not allowed inside a comment");
					this.state = State.Text;
					this.dashes = 0;
				} else {
					this.dashes = 0;
				}
				return true;
			case State.CData:
				if (c === 0x5d) {
					this.brackets++;
				} else {
					if (c === 0x3e && this.brackets >= 2) this.state = State.Text;
					this.brackets = 0;
				}
				return true;
			case State.PiTarget:
				return this.processingInstructionTarget(c);
			case State.PiBody:
				if (c === 0x3e && this.dashes === 1) {
					this.state = State.Text;
				}
				this.dashes = c === 0x3f ? 1 : 0;
				return true;
			case State.Doctype:
				return this.doctypeChar(c);
			case State.OpenName:
				if (isNameChar(c)) return this.continueName();
				this.element = this.endName();
				this.state = State.InTag;
				this.sawSpace = false;
				return this.inTag(c);
			case State.InTag:
				return this.inTag(c);
			case State.AttrName:
				if (isNameChar(c)) return this.continueName();
				this.name = this.endName();
				this.state = State.AfterAttrName;
				return this.afterAttrName(c);
			case State.AfterAttrName:
				return this.afterAttrName(c);
			case State.BeforeAttrValue:
				if (isSpace(c)) return true;
				if (c === 0x22 || c === 0x27) {
					this.quote = c;
					this.state = State.AttrValue;
					return true;
				}
				return !this.fail(`The value of the attribute '${this.name}' must be in quotes`);
			case State.AttrValue:
				if (c === this.quote) {
					this.state = State.AfterAttrValue;
					return true;
				}
				if (c === 0x3c) return !this.fail(`'<' is not allowed in the value of the attribute '${this.name}'`);
				if (c === 0x26) return this.startReference(true);
				return true;
			case State.AfterAttrValue:
				this.state = State.InTag;
				this.sawSpace = false;
				if (isSpace(c) || c === 0x3e || c === 0x2f) return this.inTag(c);
				return !this.fail(`A space is needed before another attribute, found ${describeChar(c)}`);
			case State.SelfClose:
				if (c !== 0x3e) return !this.fail(`'>' expected after '/' in a tag, found ${describeChar(c)}`);
				this.state = State.Text;
				this.closeElement();
				return true;
			case State.CloseName:
				if (!this.collecting) {
					if (!isNameStart(c)) return !this.fail(`An element name is expected after '</', found ${describeChar(c)}`);
					this.beginName();
					return true;
				}
				if (isNameChar(c)) return this.continueName();
				this.name = this.endName();
				this.state = State.AfterCloseName;
				return this.afterCloseName(c);
			case State.AfterCloseName:
				return this.afterCloseName(c);
			case State.Reference:
				return this.reference(c);
		}
		return true;
	}

	private text(c: number): boolean {
		if (c === 0x3c) {
			this.mark();
			this.state = State.Lt;
			this.brackets = 0;
			return true;
		}
		if (this.where !== Where.Root) {
			if (isSpace(c)) return true;
			return !this.fail(
				this.where === Where.Prolog
					? `Text is not allowed before the root element, found ${describeChar(c)}`
					: `Text is not allowed after the root element, found ${describeChar(c)}`,
			);
		}
		if (c === 0x26) {
			this.brackets = 0;
			return this.startReference(false);
		}
		if (c === 0x5d) {
			this.brackets++;
		} else {
			if (c === 0x3e && this.brackets >= 2) return !this.fail("']]>' is not allowed in text");
			this.brackets = 0;
		}
		return true;
	}

	private afterLt(c: number): boolean {
		if (c === 0x2f) {
			this.state = State.CloseName;
			return true;
		}
		if (c === 0x3f) {
			this.state = State.PiTarget;
			return true;
		}
		if (c === 0x21) {
			this.state = State.Bang;
			this.bang = '';
			return true;
		}
		if (isNameStart(c)) {
			if (this.where === Where.Epilog) return !this.fail('Only one root element is allowed');
			this.state = State.OpenName;
			this.beginName();
			this.attributeNames.length = 0;
			return true;
		}
		return !this.fail(`'<' must start a tag, comment, CDATA section or processing instruction; found ${describeChar(c)}`);
	}

	private afterBang(c: number): boolean {
		if (this.bang === '' && c === 0x2d) {
			this.bang = '-';
			return true;
		}
		if (this.bang === '-') {
			if (c !== 0x2d) return !this.fail("'<!-' must be followed by '-' to start a comment");
			this.state = State.Comment;
			this.dashes = 0;
			return true;
		}
		this.bang += String.fromCharCode(c);
		if (CDATA_OPEN.startsWith(this.bang)) {
			if (this.bang === CDATA_OPEN) {
				if (this.where !== Where.Root) return !this.fail('A CDATA section is only allowed inside the root element');
				this.state = State.CData;
				this.brackets = 0;
			}
			return true;
		}
		if (DOCTYPE_OPEN.startsWith(this.bang)) {
			if (this.bang === DOCTYPE_OPEN) {
				if (this.where !== Where.Prolog || this.doctype !== '') {
					return !this.fail('A DOCTYPE is only allowed once, before the root element');
				}
				this.state = State.Doctype;
				this.doctype = ' ';
				this.doctypeDepth = 0;
				this.doctypeQuote = 0;
			}
			return true;
		}
		return !this.fail(`'<!' must start a comment, CDATA section or DOCTYPE, found '<!${this.bang}'`);
	}

	private processingInstructionTarget(c: number): boolean {
		if (!this.collecting) {
			if (!isNameStart(c)) return !this.fail('A processing instruction needs a target name');
			this.beginName();
			return true;
		}
		if (isNameChar(c)) return this.continueName();
		const target = this.endName();
		if (target.toLowerCase() === 'xml') {
			const atStart = this.markLine === 1 && this.markColumn === 1;
			if (!atStart || this.where !== Where.Prolog || target !== 'xml') {
				return !this.fail('The XML declaration is only allowed at the very start of the document', this.markLine, this.markColumn);
			}
		}
		if (c === 0x3f) {
			this.state = State.PiBody;
			this.dashes = 1;
			return true;
		}
		if (!isSpace(c)) return !this.fail(`A space is needed after the processing instruction target, found ${describeChar(c)}`);
		this.state = State.PiBody;
		this.dashes = 0;
		return true;
	}

	private doctypeChar(c: number): boolean {
		if (this.doctype.length < MAX_DOCTYPE_LENGTH) this.doctype += String.fromCharCode(c);
		if (this.doctypeQuote !== 0) {
			if (c === this.doctypeQuote) this.doctypeQuote = 0;
			return true;
		}
		if (c === 0x22 || c === 0x27) {
			this.doctypeQuote = c;
		} else if (c === 0x5b) {
			this.doctypeDepth++;
		} else if (c === 0x5d) {
			this.doctypeDepth--;
		} else if (c === 0x3e && this.doctypeDepth <= 0) {
			this.state = State.Text;
			this.learnDoctype();
		}
		return true;
	}

	private learnDoctype(): void {
		const text = this.doctype;
		const subsetStart = text.indexOf('[');
		const beforeSubset = subsetStart >= 0 ? text.slice(0, subsetStart) : text;
		// Entities of an external subset cannot be known without fetching it, which is never done.
		if (/\s(?:SYSTEM|PUBLIC)\s/.test(beforeSubset) || text.length >= MAX_DOCTYPE_LENGTH) {
			this.anyEntityAllowed = true;
		}
		for (const match of text.matchAll(/<!ENTITY\s+([^\s%]+)/g)) this.declaredEntities.add(match[1]);
		if (/<!ENTITY\s+%/.test(text)) this.anyEntityAllowed = true;
	}

	private beginName(): void {
		this.collecting = true;
		this.nameStart = this.pos;
		this.namePrefix = '';
	}

	private nameTooLong(end: number): boolean {
		return this.namePrefix.length + end - this.nameStart > MAX_NAME_LENGTH;
	}

	private continueName(): boolean {
		if (!this.nameTooLong(this.pos + 1)) return true;
		return !this.fail(`A name is longer than ${MAX_NAME_LENGTH} characters`);
	}

	/** The name read so far; the current character is not part of it. */
	private endName(): string {
		this.collecting = false;
		const part = this.chunk.slice(this.nameStart, this.pos);
		return this.namePrefix === '' ? part : this.namePrefix + part;
	}

	private inTag(c: number): boolean {
		if (isSpace(c)) {
			this.sawSpace = true;
			return true;
		}
		if (c === 0x3e) {
			this.state = State.Text;
			this.openElement();
			return true;
		}
		if (c === 0x2f) {
			this.state = State.SelfClose;
			this.openElement();
			return true;
		}
		if (isNameStart(c)) {
			if (!this.sawSpace) return !this.fail(`A space is needed before the attribute, found ${describeChar(c)}`);
			this.state = State.AttrName;
			this.beginName();
			return true;
		}
		return !this.fail(`Unexpected ${describeChar(c)} in a tag`);
	}

	private afterAttrName(c: number): boolean {
		if (isSpace(c)) return true;
		if (c !== 0x3d) return !this.fail(`The attribute '${this.name}' has no value`);
		if (this.attributeNames.includes(this.name)) return !this.fail(`The attribute '${this.name}' is repeated`);
		this.attributeNames.push(this.name);
		this.state = State.BeforeAttrValue;
		return true;
	}

	private afterCloseName(c: number): boolean {
		if (isSpace(c)) return true;
		if (c !== 0x3e) return !this.fail(`'>' expected to end the closing tag '${this.name}', found ${describeChar(c)}`);
		const depth = this.openNames.length;
		if (depth === 0) return !this.fail(`The closing tag '${this.name}' has no opening tag`, this.markLine, this.markColumn);
		const expected = this.openNames[depth - 1];
		if (expected !== this.name) {
			return !this.fail(
				`Expected the closing tag '${expected}' (opened at line ${this.openLines[depth - 1]}, column ${this.openColumns[depth - 1]}), found '${this.name}'`,
				this.markLine,
				this.markColumn,
			);
		}
		this.state = State.Text;
		this.closeElement();
		return true;
	}

	private openElement(): void {
		this.openNames.push(this.element);
		this.openLines.push(this.markLine);
		this.openColumns.push(this.markColumn);
		this.where = Where.Root;
		this.elementsSeen = true;
	}

	private closeElement(): void {
		this.openNames.pop();
		this.openLines.pop();
		this.openColumns.pop();
		if (this.openNames.length === 0) this.where = Where.Epilog;
	}

	private startReference(inAttribute: boolean): boolean {
		this.referenceInAttribute = inAttribute;
		this.state = State.Reference;
		this.mark();
		this.referenceKind = 0;
		return true;
	}

	private reference(c: number): boolean {
		const kind = this.referenceKind;
		if (c === 0x3b && kind !== 0 && kind !== 2) return this.endReference();
		let valid: boolean;
		if (kind === 0) valid = isNameStart(c) || c === 0x23;
		else if (kind === 1) valid = isNameChar(c);
		else if (kind === 2) valid = c === 0x78 || isDigit(c);
		else if (kind === 3) valid = isDigit(c);
		else valid = isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
		if (!valid) {
			return !this.fail(
				kind >= 2
					? "A character reference holds only digits, as in '&#65;' or '&#x41;'"
					: "'&' must start an entity reference such as '&amp;'",
				this.markLine,
				this.markColumn,
			);
		}
		if (kind === 0) {
			this.beginName();
			this.referenceKind = c === 0x23 ? 2 : 1;
			return true;
		}
		if (kind === 2) this.referenceKind = c === 0x78 ? 4 : 3;
		return this.continueName();
	}

	private endReference(): boolean {
		const name = this.endName();
		this.state = this.referenceInAttribute ? State.AttrValue : State.Text;
		if (name.startsWith('#')) {
			const hex = name.startsWith('#x');
			const digits = name.slice(hex ? 2 : 1);
			const valid = digits.length > 0 && (hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/).test(digits);
			const codePoint = valid ? parseInt(digits, hex ? 16 : 10) : NaN;
			if (!valid || !isAllowedCodePoint(codePoint)) {
				return !this.fail(`'&${name};' is not a valid character reference`, this.markLine, this.markColumn);
			}
			return true;
		}
		if (!PREDEFINED_ENTITIES.has(name) && !this.anyEntityAllowed && !this.declaredEntities.has(name)) {
			return !this.fail(`The entity '&${name};' is not declared`, this.markLine, this.markColumn);
		}
		return true;
	}
}

function pickDecoder(head: Buffer): TextDecoder {
	if (head[0] === 0xff && head[1] === 0xfe) return new TextDecoder('utf-16le');
	if (head[0] === 0xfe && head[1] === 0xff) return new TextDecoder('utf-16be');
	const declaration = /^(?:\xEF\xBB\xBF)?<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(
		head.toString('latin1', 0, Math.min(head.length, 256)),
	);
	if (declaration) {
		try {
			return new TextDecoder(declaration[1]);
		} catch {
			// An unknown label: the bytes are read as UTF-8, as the service reads them.
		}
	}
	return new TextDecoder('utf-8');
}

/** Checks a whole document held as a string or buffer (buffers are decoded slice by slice). */
export function checkXml(document: string | Buffer): XmlProblem | null {
	return new XmlWellFormednessChecker().write(document).end();
}

/**
 * Checks a document read from a stream, one chunk at a time. `onChunk` sees every chunk read (to
 * hash it in the same pass). Reading stops at the first problem.
 */
export async function checkXmlStream(
	source: AsyncIterable<Buffer | string>,
	onChunk?: (chunk: Buffer) => void,
): Promise<XmlProblem | null> {
	const checker = new XmlWellFormednessChecker();
	for await (const chunk of source) {
		const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
		onChunk?.(bytes);
		if (checker.write(bytes).problem) break;
	}
	return checker.end();
}
