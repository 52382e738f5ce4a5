import { isSpace } from '../chars';
import * as byteClasses from './bytes';
import { Byte, type Bytes } from './bytes';
import { EntityResolver } from './entities';
import { afterLt, collectDoctype, markupStep, piTargetEnded } from './markup';
import { describeState, invalidUtf8Message } from './messages';
import { entityNameEnded, predefinedReference, referenceStep, startReference } from './references';
import { ScanContext, type XmlProblem } from './scanContext';
import { ScanMode, State, Where } from './states';
import { attributeName, attributeStart, failUnclosed, simpleTag, tagNameEnded, tagStep } from './tags';

// Copied into this module: its hot loops read their tables faster from its own constants than
// from another module's exports.
const { TEXT_STOPS, ATTRIBUTE_STOPS, COMMENT_STOPS, CDATA_STOPS, PI_STOPS, NAME_BYTE } = byteClasses;
const MAX_NAME_BYTES = 64 * 1024;

/** Checks an entity's replacement text as content (balanced elements, references). */
function checkEntityContent(text: string, resolver: EntityResolver): string | null {
	const scanner = new Scanner(ScanMode.Content, resolver);
	const bytes = Buffer.from(text, 'utf8');
	scanner.scan(bytes, 0, bytes.length);
	return scanner.finish()?.message ?? null;
}

/**
 * The well-formedness state machine over UTF-8 bytes, fed chunk by chunk. Multi-byte characters
 * never straddle two chunks (the caller holds an incomplete one back). Memory: the names of the
 * open elements, the attribute names of one tag, the DOCTYPE; never a chunk or a slice of one.
 *
 * This is its main loop. The states where a document's bytes mostly are (text, attribute values,
 * names, comments, CDATA sections, processing instructions) are read here, inline, a run of
 * ordinary bytes at a time; the others take a byte at a time in the part they belong to: tags,
 * references, and the rest of the markup.
 */
export class Scanner {
	private readonly s: ScanContext;

	constructor(mode: ScanMode, resolver?: EntityResolver, standalone = false) {
		this.s = new ScanContext(mode, resolver ?? new EntityResolver(null, checkEntityContent), standalone);
	}

	get problem(): XmlProblem | null {
		return this.s.problem;
	}

	/** The current scanning position, for problems found outside the scanner (e.g. encoding). */
	positionAfterScanned(): { line: number; column: number } {
		return this.s.positionAfterScanned();
	}

	/** Scans `buf[start, end)`; false once a problem is found. */
	scan(buf: Uint8Array, start: number, end: number): boolean {
		const s = this.s;
		if (s.problem) return false;
		let i = start;
		s.base -= start;
		// Hot states loop over their bytes inline; `continue` re-enters the dispatch.
		while (i < end) {
			switch (s.state) {
				case State.Text: {
					let b = buf[i];
					while (TEXT_STOPS[b] === 0) {
						if (++i === end) break;
						b = buf[i];
					}
					if (i === end) break;
					if (b === Byte.Lt) {
						const after = simpleTag(s, buf, i, end);
						if (after > 0) {
							i = after;
							continue;
						}
						s.mark(i);
						s.state = State.Lt;
						i++;
					} else if (b === Byte.Amp) {
						const after = predefinedReference(buf, i, end);
						if (after > 0) {
							i = after;
							continue;
						}
						startReference(s, i, false);
						i++;
					} else if (b === Byte.RightBracket) {
						s.brackets = 1;
						s.state = State.TextBrackets;
						i++;
					} else {
						i = s.character(buf, i, end);
					}
					continue;
				}
				case State.TextBrackets: {
					const b = buf[i];
					if (b === Byte.RightBracket) {
						s.brackets++;
						i++;
					} else if (b === Byte.Gt && s.brackets >= 2) {
						return s.fail("']]>' is not allowed in text", i - 2);
					} else {
						s.state = State.Text;
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
					if (b === s.quote) {
						s.state = State.AfterAttrValue;
						i++;
					} else if (b === Byte.Quote || b === Byte.Apostrophe) {
						i++;
					} else if (b === Byte.Lt) {
						return s.fail(`'<' is not allowed in the value of the attribute '${attributeName(s)}'`, i);
					} else if (b === Byte.Amp) {
						startReference(s, i, true);
						i++;
					} else {
						i = s.character(buf, i, end);
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
					if ((s.state === State.EndName || s.state === State.PiTarget) && s.scratch.length === 0 && !s.isNameStartAt(buf, i, end)) {
						return s.problem ? false : failNoName(s, buf, i, end);
					}
					while (NAME_BYTE[b] !== 0) {
						if (++i === end) break;
						b = buf[i];
					}
					if (i < end && b >= 0x80) {
						const next = s.nameCharacter(buf, i, end);
						if (next < 0) return false;
						if (next !== i) {
							nameBytes(s).append(buf, from, next);
							i = next;
							if (!nameLengthOk(s)) return false;
							continue;
						}
					}
					nameBytes(s).append(buf, from, i);
					if (!nameLengthOk(s)) return false;
					if (i === end) break;
					if (!endName(s, buf, i)) return false;
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
						s.state = State.CommentDash;
						i++;
					} else {
						i = s.character(buf, i, end);
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
						s.brackets = 1;
						s.state = State.CDataBrackets;
						i++;
					} else {
						i = s.character(buf, i, end);
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
						s.state = s.state === State.PiBody ? State.PiQuestion : State.DeclarationQuestion;
						i++;
					} else {
						i = s.character(buf, i, end);
					}
					continue;
				}
				case State.Doctype:
					i = collectDoctype(s, buf, i, end);
					if (s.problem) return false;
					continue;
				default:
					if (!step(s, buf, i, end)) return false;
					i = s.nextIndex;
			}
		}
		s.base += end;
		return s.problem === null;
	}

	/** Ends the input; the first problem, or null. */
	finish(): XmlProblem | null {
		const s = this.s;
		if (s.problem) return s.problem;
		const state = s.state;
		if (s.mode === ScanMode.Content) {
			if (state !== State.Text && state !== State.TextBrackets) return s.failAtMark(`It ends inside ${describeState(state)}`);
			if (s.stackEnds.length > 0) return failUnclosed(s, 'is not closed inside it');
			return null;
		}
		if (state !== State.Misc) {
			if (state === State.Text || state === State.TextBrackets) return failUnclosed(s, 'is never closed');
			return s.failAtMark(`The document ends inside ${describeState(state)}`);
		}
		if (!s.rootSeen) {
			s.problem = { message: 'The document has no root element', line: s.line, column: s.columnAt(0) };
		}
		return s.problem;
	}
}

/**
 * The states that take a byte at a time: the byte at `buf[i]` is consumed unless the state's
 * part sets `nextIndex` otherwise. False once a problem is found.
 */
function step(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	s.nextIndex = i + 1;
	switch (s.state) {
		case State.Misc:
			return outsideRoot(s, buf, i, end);
		case State.Lt:
			return afterLt(s, buf, i, end);
		case State.Bang:
		case State.CommentDash:
		case State.CommentDashes:
		case State.CDataBrackets:
		case State.PiSpace:
		case State.PiQuestion:
		case State.DeclarationQuestion:
			return markupStep(s, buf, i, end);
		case State.InTag:
		case State.AfterAttrName:
		case State.BeforeAttrValue:
		case State.AfterAttrValue:
		case State.EmptyEnd:
		case State.AfterEndName:
			return tagStep(s, buf, i, end);
		default:
			// Reference, CharRefStart, CharRefDecimal, CharRefHex: after the '&' of a reference.
			return referenceStep(s, buf, i, end);
	}
}

/** A byte before or after the root element: only markup and white space may be there. */
function outsideRoot(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	const b = buf[i];
	if (b === Byte.Lt) {
		s.mark(i);
		s.state = State.Lt;
		return true;
	}
	if (isSpace(b)) return s.space(b, i);
	if (b >= 0x80 && s.decode(buf, i, end) < 0) return s.fail(invalidUtf8Message(buf, i, end), i);
	if (s.where === Where.Prolog) {
		return s.fail(`Text is not allowed before the root element, found ${s.describeAt(buf, i, end)}`, i);
	}
	return s.fail(`Text is not allowed after the root element, found ${s.describeAt(buf, i, end)}`, i);
}

function failNoName(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	if (s.state === State.EndName) return s.fail(`An element name is expected after '</', found ${s.describeAt(buf, i, end)}`, i);
	return s.fail(`A processing instruction needs a target name, found ${s.describeAt(buf, i, end)}`, i);
}

/** Where the name being read goes: the open elements, the tag's attributes, or `scratch`. */
function nameBytes(s: ScanContext): Bytes {
	switch (s.state) {
		case State.StartName:
			return s.stack;
		case State.AttrName:
			return s.attributes;
		default:
			return s.scratch;
	}
}

function nameLengthOk(s: ScanContext): boolean {
	const bytes = nameBytes(s);
	const start = s.state === State.StartName ? s.stackEnds[s.stackEnds.length - 1] : s.state === State.AttrName ? attributeStart(s) : 0;
	if (bytes.length - start <= MAX_NAME_BYTES) return true;
	return s.fail(`A name is longer than ${MAX_NAME_BYTES} bytes`, 0);
}

/** The name that was being read ends before `buf[i]`, where the main loop goes on. */
function endName(s: ScanContext, buf: Uint8Array, i: number): boolean {
	switch (s.state) {
		case State.StartName:
		case State.AttrName:
		case State.EndName:
			tagNameEnded(s);
			return true;
		case State.PiTarget:
			return piTargetEnded(s);
		default:
			return entityNameEnded(s, buf[i]);
	}
}
