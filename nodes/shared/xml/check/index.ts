import { declarationOpen, encodingOf, HEAD_TEXT_BYTES, type Transcoder } from './encoding';
import type { XmlProblem } from './scanContext';
import { Scanner } from './scanner';
import { ScanMode } from './states';

export type { XmlProblem } from './scanContext';

/** Bytes read before the encoding is decided: a byte-order mark and the start of the XML declaration. */
const HEAD_BYTES = 16;

/**
 * A streaming well-formedness check (XML 1.0, fifth edition): the XML declaration, the DOCTYPE
 * and its internal subset, elements, attributes, references, comments, CDATA sections,
 * processing instructions, and the characters XML allows, in UTF-8, UTF-16 (with a byte-order
 * mark), ISO-8859-1, Windows-1252 or US-ASCII. Memory is the open-element stack and the DOCTYPE,
 * whatever the document's size. Entities are never expanded into the document and nothing
 * external is fetched: references to internal entities are checked against their replacement
 * text once per entity.
 */
export class XmlWellFormednessChecker {
	private head: Buffer | undefined;
	private scanner: Scanner | undefined;
	private transcode: Transcoder | null = null;
	/** An incomplete UTF-8 character at the end of the last chunk (a copy, never a slice). */
	private carry: Buffer | undefined;
	private problemFound: XmlProblem | null = null;

	/** The first problem found so far, or null. */
	get problem(): XmlProblem | null {
		return this.problemFound ?? this.scanner?.problem ?? null;
	}

	/** Feeds the next piece of the document; strings are taken as UTF-8. */
	write(chunk: Buffer | string): this {
		if (this.problem) return this;
		const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
		if (this.scanner) {
			this.feed(bytes, false);
			return this;
		}
		this.head = this.head ? Buffer.concat([this.head, bytes]) : bytes;
		if (
			this.head.length >= HEAD_BYTES &&
			(this.head.length >= HEAD_TEXT_BYTES || !declarationOpen(this.head))
		)
			this.start(false);
		return this;
	}

	/** Ends the document and returns its first problem, or null when it is well-formed. */
	end(): XmlProblem | null {
		if (!this.scanner && !this.problemFound) this.start(true);
		if (this.problem) return this.problem;
		const scanner = this.scanner as Scanner;
		if (this.transcode) {
			this.feed(Buffer.alloc(0), true);
		} else if (this.carry) {
			// The document ends inside a character: the scanner reports the bytes as not UTF-8.
			scanner.scan(this.carry, 0, this.carry.length);
		}
		return this.problem ?? scanner.finish();
	}

	private start(final: boolean): void {
		const head = this.head ?? Buffer.alloc(0);
		this.head = undefined;
		const encoding = encodingOf(head);
		if ('problem' in encoding) {
			this.problemFound = encoding.problem;
			return;
		}
		this.scanner = new Scanner(ScanMode.Document, undefined, encoding.standalone);
		this.transcode = encoding.transcode;
		this.feed(head.subarray(encoding.byteOrderMarkLength), final);
	}

	private feed(bytes: Buffer, final: boolean): void {
		const scanner = this.scanner as Scanner;
		if (this.transcode) {
			const converted = this.transcode(bytes, final);
			if (typeof converted === 'string') {
				const { line, column } = scanner.positionAfterScanned();
				this.problemFound = { message: converted, line, column };
				return;
			}
			scanner.scan(converted.utf8, 0, converted.utf8.length);
			if (converted.problem && !scanner.problem) {
				const { line, column } = scanner.positionAfterScanned();
				this.problemFound = { message: converted.problem, line, column };
			}
			return;
		}
		if (this.carry) {
			bytes = Buffer.concat([this.carry, bytes]);
			this.carry = undefined;
		}
		const complete = completeCharacters(bytes);
		if (complete < bytes.length) this.carry = Buffer.from(bytes.subarray(complete));
		scanner.scan(bytes, 0, complete);
	}
}

/** Length of `bytes` without an incomplete UTF-8 character at its end. */
function completeCharacters(bytes: Buffer): number {
	const length = bytes.length;
	for (let back = 1; back <= 3 && back <= length; back++) {
		const b = bytes[length - back];
		if (b < 0x80) return length;
		if (b >= 0xc0) {
			const needed = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
			return needed > back ? length - back : length;
		}
	}
	return length;
}

/** Checks a whole document held as a string or buffer. */
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
