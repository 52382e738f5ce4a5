/**
 * What '<' starts besides a tag: a comment, a CDATA section, a processing instruction (the XML
 * declaration among them) or the DOCTYPE. Their bodies and endings are read by the main loop
 * (scanner.ts); here are their openings, and the DOCTYPE once it has ended.
 */

import { Byte, startsWith } from './bytes';
import { readDoctype } from './doctype';
import { DoctypeCollector } from './doctypeCollector';
import { positionAfter } from './messages';
import type { ScanContext } from './scanContext';
import { ScanMode, State, Where } from './states';
import { startTag } from './tags';

const COMMENT_OPEN = Buffer.from('--');
const CDATA_OPEN = Buffer.from('[CDATA[');
const BANG_COMMENT = '--';
const BANG_CDATA = '[CDATA[';
const BANG_DOCTYPE = 'DOCTYPE';
const MAX_DOCTYPE_BYTES = 4 * 1024 * 1024;

/** The byte after '<', at `buf[i]`. */
export function afterLt(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	const b = buf[i];
	if (b === Byte.Slash || b === Byte.Question) {
		s.state = b === Byte.Slash ? State.EndName : State.PiTarget;
		s.scratch.length = 0;
		return true;
	}
	if (b === Byte.Bang) {
		if (startsWith(buf, i + 1, end, COMMENT_OPEN)) {
			s.state = State.Comment;
			s.nextIndex = i + 3;
		} else if (s.where === Where.Root && startsWith(buf, i + 1, end, CDATA_OPEN)) {
			s.state = State.CData;
			s.nextIndex = i + 1 + CDATA_OPEN.length;
		} else {
			s.state = State.Bang;
			s.bang = '';
		}
		return true;
	}
	return startTag(s, buf, i, end);
}

/** A byte after '<!' that did not start a comment or CDATA section in one go. */
export function afterBang(s: ScanContext, b: number, i: number): boolean {
	s.bang += String.fromCharCode(b);
	const bang = s.bang;
	if (bang === BANG_COMMENT) {
		s.state = State.Comment;
		return true;
	}
	if (bang === BANG_CDATA) {
		if (s.where !== Where.Root)
			return !s.failAtMark('A CDATA section is only allowed inside the root element');
		s.state = State.CData;
		return true;
	}
	if (bang === BANG_DOCTYPE) {
		if (s.mode === ScanMode.Content || s.where !== Where.Prolog || s.doctype) {
			return !s.failAtMark('A DOCTYPE is only allowed once, before the root element');
		}
		s.doctype = new DoctypeCollector(s.markLine, s.markColumn);
		s.state = State.Doctype;
		return true;
	}
	if (BANG_COMMENT.startsWith(bang) || BANG_CDATA.startsWith(bang) || BANG_DOCTYPE.startsWith(bang))
		return true;
	if (bang.length === 2 && bang[0] === '-')
		return s.fail("'<!-' must be followed by '-' to start a comment", i);
	return s.fail(`'<!' must start a comment, CDATA section or DOCTYPE, found '<!${bang}'`, i);
}

/** The processing instruction target in `scratch` has ended: 'xml' starts the XML declaration. */
export function piTargetEnded(s: ScanContext): boolean {
	const target = s.scratch;
	const isXml =
		target.length === 3 &&
		(target.data[0] | 0x20) === 0x78 &&
		(target.data[1] | 0x20) === 0x6d &&
		(target.data[2] | 0x20) === 0x6c;
	if (isXml) {
		const atStart =
			s.mode === ScanMode.Document &&
			s.markLine === 1 &&
			s.markColumn === 1 &&
			s.where === Where.Prolog &&
			!s.declarationSeen;
		if (!atStart || target.text() !== 'xml') {
			return !s.failAtMark(
				target.text() === 'xml'
					? 'The XML declaration is only allowed at the very start of the document'
					: `The processing instruction target '${target.text()}' is reserved`,
			);
		}
		// Read and checked before the scan (it decides the encoding): passed over here.
		s.declarationSeen = true;
		s.state = State.Declaration;
		return true;
	}
	s.state = State.PiSpace;
	return true;
}

/**
 * Collects the DOCTYPE's bytes from `buf[i]`; once it has ended, reads it whole and lets its
 * entities decide the references that follow. Returns the index after what it took.
 */
export function collectDoctype(s: ScanContext, buf: Uint8Array, i: number, end: number): number {
	const collector = s.doctype as DoctypeCollector;
	const from = i;
	i = collector.feed(buf, i, end, s);
	if (s.problem) return end;
	if (collector.bytes.length + (i - from) > MAX_DOCTYPE_BYTES) {
		return s.failAt(
			`The DOCTYPE is longer than ${MAX_DOCTYPE_BYTES} bytes, more than this check reads`,
			i,
			end,
		);
	}
	collector.bytes.append(buf, from, i);
	if (collector.done) {
		s.state = State.Misc;
		learnDoctype(s, collector);
	}
	return i;
}

function learnDoctype(s: ScanContext, collector: DoctypeCollector): void {
	const text = `<!DOCTYPE${collector.bytes.text()}`;
	const result = readDoctype(text, s.standalone);
	if ('problem' in result)
		return failInDoctype(s, collector, text, result.problem.offset, result.problem.message);
	s.resolver = s.resolver.withDoctype(result.doctype);
	for (const { value, offset } of result.doctype.defaults) {
		const problem = s.resolver.attributeValueProblem(value);
		if (problem) return failInDoctype(s, collector, text, offset, problem);
	}
}

function failInDoctype(
	s: ScanContext,
	collector: DoctypeCollector,
	text: string,
	offset: number,
	message: string,
): void {
	s.problem ??= { message, ...positionAfter(text, offset, collector.line, collector.column) };
}
