import { isNameChar, isNameStart, isSpace } from '../chars';
import type { EntityDeclaration } from './doctypeModel';

/** The first problem in a DOCTYPE: thrown by `DoctypeReader.fail`, caught once by `readDoctype`. */
export class DoctypeProblem extends Error {
	constructor(
		message: string,
		readonly offset: number,
	) {
		super(message);
	}
}

const PUBID_CHARS = /^[ \r\na-zA-Z0-9\-'()+,./:=?;!*#@$_%]*$/;

/** How deep content model groups and parameter entity references may nest. */
export const MAX_NESTING = 64;

/**
 * A cursor over the text of a DOCTYPE, or of a parameter entity referenced in it, and what the
 * declarations read so far have declared. The grammar's parts (doctype.ts, doctypeDeclarations.ts,
 * doctypeEntities.ts) are functions over it, named `r` where they take it.
 */
export class DoctypeReader {
	readonly entities = new Map<string, EntityDeclaration>();
	readonly parameterEntities = new Map<string, string | null>();
	/** Default attribute values, checked against the entities once the whole DTD is known. */
	readonly defaults: Array<{ value: string; offset: number }> = [];
	/** See `Doctype.undeclaredAllowed`. */
	undeclaredAllowed = false;
	text: string;
	pos = 0;
	/** Reading the replacement text of a parameter entity, where external-subset rules apply. */
	inParameterEntity = false;
	/** Where, in the DOCTYPE, the parameter entity being read was referenced. */
	referenceOffset = 0;
	/** How many parameter entity references deep the reading is. */
	nesting = 0;

	constructor(
		text: string,
		readonly standalone: boolean,
	) {
		this.text = text;
	}

	/** Ends the reading with a problem; inside a parameter entity, placed at its reference. */
	fail(message: string, offset = this.pos): never {
		throw new DoctypeProblem(message, this.inParameterEntity ? this.referenceOffset : offset);
	}

	at(literal: string): boolean {
		return this.text.startsWith(literal, this.pos);
	}

	expect(literal: string, what: string): void {
		if (!this.at(literal)) this.unexpected(what);
		this.pos += literal.length;
	}

	unexpected(what: string): never {
		if (this.pos >= this.text.length) this.fail(`The DOCTYPE ends where ${what} is expected`);
		const c = this.text.codePointAt(this.pos) as number;
		if (c === 0x25 && !this.inParameterEntity && !what.startsWith('a space')) {
			this.fail(
				'A parameter entity reference is not allowed inside a declaration of the internal subset',
			);
		}
		const shown =
			c > 0x20 && c < 0x7f
				? `'${String.fromCharCode(c)}'`
				: `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
		this.fail(`In the DOCTYPE, ${what} is expected, found ${shown}`);
	}

	/** Skips white space; whether there was any. */
	skipSpace(): boolean {
		const start = this.pos;
		while (this.pos < this.text.length && isSpace(this.text.charCodeAt(this.pos))) this.pos++;
		return this.pos > start;
	}

	requireSpace(where: string): void {
		if (!this.skipSpace()) this.unexpected(`a space ${where}`);
	}

	readName(what: string, nmtoken = false): string {
		const start = this.pos;
		const text = this.text;
		while (this.pos < text.length) {
			const c = text.codePointAt(this.pos) as number;
			const ok = this.pos === start && !nmtoken ? isNameStart(c) : isNameChar(c);
			if (!ok) break;
			this.pos += c > 0xffff ? 2 : 1;
		}
		if (this.pos === start) this.unexpected(what);
		return text.slice(start, this.pos);
	}

	readQuoted(what: string): string {
		const quote = this.text[this.pos];
		if (quote !== '"' && quote !== "'") this.unexpected(what);
		const end = this.text.indexOf(quote, this.pos + 1);
		if (end < 0) this.fail(`In the DOCTYPE, ${what} is not closed`);
		const value = this.text.slice(this.pos + 1, end);
		this.pos = end + 1;
		return value;
	}

	/** SYSTEM "uri" or PUBLIC "id" "uri" (for a notation the URI after PUBLIC is optional). */
	readExternalId(notation: boolean): void {
		if (this.at('SYSTEM')) {
			this.pos += 6;
			this.requireSpace("after 'SYSTEM'");
			this.readQuoted('a system identifier');
			return;
		}
		if (!this.at('PUBLIC')) this.unexpected("a quoted value, 'SYSTEM' or 'PUBLIC'");
		this.pos += 6;
		this.requireSpace("after 'PUBLIC'");
		const offset = this.pos;
		const publicId = this.readQuoted('a public identifier');
		if (!PUBID_CHARS.test(publicId))
			this.fail('A public identifier holds a character it may not hold', offset);
		const spaced = this.skipSpace();
		if (notation && !(this.at('"') || this.at("'"))) return;
		if (!spaced) this.unexpected('a space before the system identifier');
		this.readQuoted('a system identifier');
	}
}
