import { isSpace } from '../chars';
import * as byteClasses from './bytes';
import { Byte } from './bytes';
import type { ScanContext, XmlProblem } from './scanContext';
import { ScanMode, State, Where } from './states';

// Copied into this module: its hot loops read their tables faster from its own constants than
// from another module's exports.
const { ATTRIBUTE_STOPS, NAME_BYTE } = byteClasses;
/** Above this many attributes in one tag, repeated names are found through a set, not by comparison. */
const ATTRIBUTES_COMPARED_DIRECTLY = 8;

/**
 * The common case of a tag inside the root element, read in one go: an ASCII start tag whose
 * attribute values hold no reference (at most eight attributes), or an ASCII end tag that
 * matches, all within this chunk and on one line. Returns the index after it, or 0 to read it
 * through the state machine (which also words any problem).
 */
export function simpleTag(s: ScanContext, buf: Uint8Array, i: number, end: number): number {
	let j = i + 1;
	if (j >= end) return 0;
	if (buf[j] === Byte.Slash) {
		const depth = s.stackEnds.length;
		if (depth === 0) return 0;
		const start = s.stackEnds[depth - 1];
		const length = s.stack.length - start;
		const data = s.stack.data;
		j++;
		if (j + length >= end) return 0;
		for (let k = 0; k < length; k++) if (buf[j + k] !== data[start + k]) return 0;
		j += length;
		while (j < end && (buf[j] === 0x20 || buf[j] === 0x09)) j++;
		if (j >= end || buf[j] !== Byte.Gt) return 0;
		closeElement(s);
		return j + 1;
	}
	if (NAME_BYTE[buf[j]] !== 1) return 0;
	const nameStart = j;
	while (++j < end && NAME_BYTE[buf[j]] !== 0);
	const nameEnd = j;
	const starts = s.simpleAttributeStarts;
	const ends = s.simpleAttributeEnds;
	let count = 0;
	for (;;) {
		const spaceStart = j;
		while (j < end && (buf[j] === 0x20 || buf[j] === 0x09)) j++;
		if (j >= end) return 0;
		let b = buf[j];
		if (b === Byte.Gt || (b === Byte.Slash && j + 1 < end && buf[j + 1] === Byte.Gt)) {
			s.mark(i);
			s.stackEnds.push(s.stack.length);
			s.stack.append(buf, nameStart, nameEnd);
			openElement(s);
			if (b === Byte.Gt) return j + 1;
			closeElement(s);
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
			for (let m = 0; same && m < length; m++)
				same = buf[starts[k] + m] === buf[attributeStart + m];
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

/** '<' followed by `buf[i]`, which is none of '/', '?' and '!': the start of an element. */
export function startTag(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	if (s.where === Where.Epilog) {
		if (s.isNameStartAt(buf, i, end)) return s.fail('Only one root element is allowed', i - 1);
	}
	s.stackEnds.push(s.stack.length);
	s.attributes.length = 0;
	s.attributeEnds.length = 0;
	s.attributeSet = undefined;
	if (!s.isNameStartAt(buf, i, end)) {
		if (s.problem) return false;
		return s.fail(
			`'<' must start a tag, comment, CDATA section or processing instruction; found ${s.describeAt(buf, i, end)}`,
			i,
		);
	}
	s.state = State.StartName;
	s.nextIndex = i;
	return true;
}

/** The element, attribute or closing tag name that was being read has ended. */
export function tagNameEnded(s: ScanContext): void {
	switch (s.state) {
		case State.StartName:
			s.state = State.InTag;
			s.sawSpace = false;
			return;
		case State.AttrName:
			s.attributeEnds.push(s.attributes.length);
			s.state = State.AfterAttrName;
			return;
		default:
			s.state = State.AfterEndName;
	}
}

/** The byte-at-a-time states inside a tag, between its names and attribute values. */
export function tagStep(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	const b = buf[i];
	switch (s.state) {
		case State.InTag:
			return inTag(s, buf, i, end);
		case State.AfterAttrName:
			if (isSpace(b)) return s.space(b, i);
			if (b !== Byte.Equals) return s.fail(`The attribute '${attributeName(s)}' has no value`, i);
			if (!attributeIsNew(s)) return s.fail(`The attribute '${attributeName(s)}' is repeated`, i);
			s.state = State.BeforeAttrValue;
			return true;
		case State.BeforeAttrValue:
			if (isSpace(b)) return s.space(b, i);
			if (b !== Byte.Quote && b !== Byte.Apostrophe)
				return s.fail(`The value of the attribute '${attributeName(s)}' must be in quotes`, i);
			s.quote = b;
			s.state = State.AttrValue;
			return true;
		case State.AfterAttrValue:
			s.state = State.InTag;
			s.sawSpace = false;
			if (isSpace(b) || b === Byte.Gt || b === Byte.Slash) return inTag(s, buf, i, end);
			return s.fail(
				`A space is needed before another attribute, found ${s.describeAt(buf, i, end)}`,
				i,
			);
		case State.EmptyEnd:
			if (b !== Byte.Gt)
				return s.fail(`'>' expected after '/' in a tag, found ${s.describeAt(buf, i, end)}`, i);
			openElement(s);
			closeElement(s);
			return true;
		default:
			// After the name of a closing tag.
			if (isSpace(b)) return s.space(b, i);
			if (b !== Byte.Gt)
				return s.fail(
					`'>' expected to end the closing tag '${s.scratch.text()}', found ${s.describeAt(buf, i, end)}`,
					i,
				);
			return endTag(s);
	}
}

function inTag(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	const b = buf[i];
	if (isSpace(b)) {
		s.sawSpace = true;
		if (b === Byte.Newline) s.newline(i);
		return true;
	}
	if (b === Byte.Gt) {
		openElement(s);
		return true;
	}
	if (b === Byte.Slash) {
		s.state = State.EmptyEnd;
		return true;
	}
	if (s.isNameStartAt(buf, i, end)) {
		if (!s.sawSpace)
			return s.fail(
				`A space is needed before the attribute, found ${s.describeAt(buf, i, end)}`,
				i,
			);
		s.state = State.AttrName;
		s.nextIndex = i;
		return true;
	}
	if (s.problem) return false;
	return s.fail(`Unexpected ${s.describeAt(buf, i, end)} in a tag`, i);
}

/** Where, in `attributes`, the name of the attribute being read starts. */
export function attributeStart(s: ScanContext): number {
	const count = s.attributeEnds.length;
	return count === 0 ? 0 : s.attributeEnds[count - 1];
}

/** The name of the attribute being read, or whose value is being read. */
export function attributeName(s: ScanContext): string {
	const count = s.attributeEnds.length;
	return s.attributes.text(count < 2 ? 0 : s.attributeEnds[count - 2], s.attributeEnds[count - 1]);
}

/** Whether the attribute just named is not yet in its tag: linear in attributes per tag. */
function attributeIsNew(s: ScanContext): boolean {
	const count = s.attributeEnds.length;
	const ends = s.attributeEnds;
	const data = s.attributes.data;
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
	if (!s.attributeSet) {
		s.attributeSet = new Set();
		for (let k = 0, otherStart = 0; k < count - 1; otherStart = ends[k], k++)
			s.attributeSet.add(s.attributes.text(otherStart, ends[k]));
	}
	const name = s.attributes.text(start, start + length);
	if (s.attributeSet.has(name)) return false;
	s.attributeSet.add(name);
	return true;
}

function openElement(s: ScanContext): void {
	s.openLines.push(s.markLine);
	s.openColumns.push(s.markColumn);
	s.where = Where.Root;
	s.rootSeen = true;
	s.state = State.Text;
}

function closeElement(s: ScanContext): void {
	s.stack.length = s.stackEnds.pop() as number;
	s.openLines.pop();
	s.openColumns.pop();
	const depth = s.stackEnds.length;
	if (depth === 0 && s.mode === ScanMode.Document) {
		s.where = Where.Epilog;
		s.state = State.Misc;
	} else {
		s.state = State.Text;
	}
}

function openName(s: ScanContext, index: number): string {
	const start = s.stackEnds[index];
	const end = index + 1 < s.stackEnds.length ? s.stackEnds[index + 1] : s.stack.length;
	return s.stack.text(start, end);
}

/** The closing tag named in `scratch` has ended: it must match the innermost open element. */
function endTag(s: ScanContext): boolean {
	const depth = s.stackEnds.length;
	const name = s.scratch;
	if (depth === 0) {
		const where = s.mode === ScanMode.Content ? 'in the entity' : '';
		return !s.failAtMark(
			`The closing tag '${name.text()}' has no opening tag${where ? ` ${where}` : ''}`,
		);
	}
	const start = s.stackEnds[depth - 1];
	const length = s.stack.length - start;
	let same = length === name.length;
	for (let k = 0; same && k < length; k++) same = s.stack.data[start + k] === name.data[k];
	if (!same) {
		return !s.failAtMark(
			`Expected the closing tag '${openName(s, depth - 1)}' (opened at line ${s.openLines[depth - 1]}, column ${s.openColumns[depth - 1]}), found '${name.text()}'`,
		);
	}
	closeElement(s);
	return true;
}

/** Reports the innermost open element: the input ended before it was closed. */
export function failUnclosed(s: ScanContext, what: string): XmlProblem {
	const depth = s.stackEnds.length;
	s.problem ??= {
		message: `The element '${openName(s, depth - 1)}' ${what}`,
		line: s.openLines[depth - 1],
		column: s.openColumns[depth - 1],
	};
	return s.problem;
}
