import { isSpace } from '../chars';
import * as byteClasses from './bytes';
import { Byte } from './bytes';
import { EntityResolver } from './entities';
import { afterBang, afterLt, collectDoctype } from './markup';
import { endName, failNoName, nameBytes, nameLengthOk } from './names';
import { describeState, invalidUtf8Message } from './messages';
import { predefinedReference, referenceStep, startReference } from './references';
import { ScanContext, type XmlProblem } from './scanContext';
import { ScanMode, State, Where } from './states';
import { attributeName, failUnclosed, simpleTag, tagStep } from './tags';

// Copied into this module: its hot loops read their tables faster from its own constants than
// from another module's exports.
const { TEXT_STOPS, ATTRIBUTE_STOPS, COMMENT_STOPS, CDATA_STOPS, PI_STOPS, NAME_BYTE } =
	byteClasses;

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
		this.s = new ScanContext(
			mode,
			resolver ?? new EntityResolver(null, checkEntityContent),
			standalone,
		);
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
						return s.fail(
							`'<' is not allowed in the value of the attribute '${attributeName(s)}'`,
							i,
						);
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
					if (
						(s.state === State.EndName || s.state === State.PiTarget) &&
						s.scratch.length === 0 &&
						!s.isNameStartAt(buf, i, end)
					) {
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
			if (state !== State.Text && state !== State.TextBrackets)
				return s.failAtMark(`It ends inside ${describeState(state)}`);
			if (s.stackEnds.length > 0) return failUnclosed(s, 'is not closed inside it');
			return null;
		}
		if (state !== State.Misc) {
			if (state === State.Text || state === State.TextBrackets)
				return failUnclosed(s, 'is never closed');
			return s.failAtMark(`The document ends inside ${describeState(state)}`);
		}
		if (!s.rootSeen) {
			s.problem = {
				message: 'The document has no root element',
				line: s.line,
				column: s.columnAt(0),
			};
		}
		return s.problem;
	}
}

/**
 * The states that take a byte at a time: the byte at `buf[i]` is consumed unless the state sets
 * `nextIndex` otherwise. False once a problem is found.
 *
 * The states of comments, CDATA sections and processing instructions are handled here, beside
 * the loops that read their bodies; the others are handed to their part. Kept as one function
 * that V8 finds too large to inline into `scan`: when it was a small dispatcher, the optimiser
 * sometimes inlined it and its parts there instead of the character checks of the hot loops.
 */
function step(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	s.nextIndex = i + 1;
	const b = buf[i];
	switch (s.state) {
		case State.Misc:
			return outsideRoot(s, buf, i, end);
		case State.Lt:
			return afterLt(s, buf, i, end);
		case State.Bang:
			return afterBang(s, b, i);
		case State.InTag:
		case State.AfterAttrName:
		case State.BeforeAttrValue:
		case State.AfterAttrValue:
		case State.EmptyEnd:
		case State.AfterEndName:
			return tagStep(s, buf, i, end);
		case State.Reference:
		case State.CharRefStart:
		case State.CharRefDecimal:
		case State.CharRefHex:
			return referenceStep(s, buf, i, end);
		case State.CommentDash:
			if (b === Byte.Dash) {
				s.state = State.CommentDashes;
				return true;
			}
			s.state = State.Comment;
			s.nextIndex = i;
			return true;
		case State.CommentDashes:
			if (b !== Byte.Gt) return s.fail("'--' is not allowed inside a comment", i - 2);
			s.state = afterMarkup(s);
			return true;
		case State.CDataBrackets:
			if (b === Byte.RightBracket) {
				s.brackets++;
				return true;
			}
			if (b === Byte.Gt && s.brackets >= 2) {
				s.state = State.Text;
				return true;
			}
			s.state = State.CData;
			s.nextIndex = i;
			return true;
		case State.PiSpace:
			if (b === Byte.Question) {
				s.state = State.PiQuestion;
				return true;
			}
			if (!isSpace(b))
				return s.fail(
					`A space is needed after the processing instruction target, found ${s.describeAt(buf, i, end)}`,
					i,
				);
			s.state = State.PiBody;
			return s.space(b, i);
		default:
			// PiQuestion, DeclarationQuestion: '?' in a processing instruction or the XML declaration.
			if (b === Byte.Gt) {
				s.state = afterMarkup(s);
			} else if (b !== Byte.Question) {
				s.state = s.state === State.PiQuestion ? State.PiBody : State.Declaration;
				s.nextIndex = i;
			}
			return true;
	}
}

/** Where the scanner is once a comment or processing instruction has ended. */
function afterMarkup(s: ScanContext): State {
	return s.where === Where.Root && (s.stackEnds.length > 0 || s.mode === ScanMode.Content)
		? State.Text
		: State.Misc;
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
		return s.fail(
			`Text is not allowed before the root element, found ${s.describeAt(buf, i, end)}`,
			i,
		);
	}
	return s.fail(
		`Text is not allowed after the root element, found ${s.describeAt(buf, i, end)}`,
		i,
	);
}
