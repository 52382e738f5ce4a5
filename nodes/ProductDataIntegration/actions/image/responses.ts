/**
 * The spec leaves the body layouts of the image routes open ("the response carries the image
 * hashcode for each image"), so answers are read leniently: the plausible layouts are recognised
 * and anything else is handed back raw instead of failing an upload that did succeed.
 */

import { HASHCODE } from '../../../shared/ports';
import { cleanServiceText, parseServiceJson } from '../../../shared/transport';

/** One hashcode the upload answer names, with the md5 the service reports for it when it does. */
interface ReturnedHashcode {
	hashcode: string;
	md5?: string;
}

/** An entry of a list answer that holds no usable hashcode: what it holds instead, short and on one line. */
interface UnusableEntry {
	hashcode?: undefined;
	md5?: undefined;
	unusable: string;
}

type ReturnedEntry = ReturnedHashcode | UnusableEntry;

const HASHCODE_KEYS = ['hashcode', 'hashCode', 'HashCode', 'Hashcode', 'hash', 'Hash', 'id', 'Id'];
const LIST_KEYS = ['hashcodes', 'hashCodes', 'HashCodes', 'images', 'Images', 'files', 'Files'];
const MD5_KEYS = ['md5', 'MD5', 'Md5'];
/** Twice an md5's 32 hex digits: room to show what the service reports instead of one. */
const MD5_TEXT_LIMIT = 64;
/** What an error shows of an entry without a usable hashcode. */
const UNUSABLE_TEXT_LIMIT = 100;

function isRecord(value: unknown): value is Record<string, unknown> {
	return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function asToken(value: unknown): string | undefined {
	if (typeof value === 'number' && Number.isFinite(value)) return String(value);
	if (typeof value !== 'string') return undefined;
	const trimmed = value.trim();
	return HASHCODE.test(trimmed) ? trimmed : undefined;
}

function pick(record: Record<string, unknown>, keys: string[]): unknown {
	for (const key of keys) {
		if (record[key] !== undefined && record[key] !== null) return record[key];
	}
	return undefined;
}

function fromRecord(record: Record<string, unknown>): ReturnedHashcode | undefined {
	const hashcode = asToken(pick(record, HASHCODE_KEYS));
	if (hashcode === undefined) return undefined;
	const md5 = pick(record, MD5_KEYS);
	// An md5 has 32 hex digits: whatever else the service reports goes into a warning, short and on one line.
	return typeof md5 === 'string' && md5 !== ''
		? { hashcode, md5: cleanServiceText(md5, MD5_TEXT_LIMIT).toLowerCase() }
		: { hashcode };
}

function unusable(element: unknown): UnusableEntry {
	const text = JSON.stringify(element) ?? String(element);
	return {
		unusable: cleanServiceText(text.slice(0, UNUSABLE_TEXT_LIMIT * 2), UNUSABLE_TEXT_LIMIT),
	};
}

function fromJson(value: unknown, depth: number): ReturnedEntry[] | undefined {
	if (depth > 3) return undefined;
	if (typeof value === 'string') return fromText(value, depth + 1);
	if (typeof value === 'number') return fromText(String(value), depth + 1);
	if (Array.isArray(value)) {
		// A list has an entry per image sent, in order: an entry without a usable hashcode concerns
		// its own image, and the others keep theirs.
		return value.map((element): ReturnedEntry => {
			const token = asToken(element);
			if (token !== undefined) return { hashcode: token };
			return (isRecord(element) ? fromRecord(element) : undefined) ?? unusable(element);
		});
	}
	if (isRecord(value)) {
		const list = pick(value, LIST_KEYS);
		if (list !== undefined) return fromJson(list, depth + 1);
		const single = fromRecord(value);
		return single ? [single] : undefined;
	}
	return undefined;
}

function fromText(text: string, depth: number): ReturnedEntry[] | undefined {
	const trimmed = text.trim();
	if (trimmed === '') return [];
	// JSON literals are answers (e.g. a success flag), never hashcodes.
	if (/^(true|false|null)$/.test(trimmed)) return undefined;
	if (/^[[{"]/.test(trimmed)) {
		let parsed: unknown;
		try {
			parsed = parseServiceJson(trimmed);
		} catch {
			return undefined;
		}
		return fromJson(parsed, depth);
	}
	const tokens = trimmed
		.split(/[\r\n,;]+/)
		.map((token) => token.trim())
		.filter((token) => token !== '');
	if (!tokens.every((token) => HASHCODE.test(token))) return undefined;
	return tokens.map((hashcode) => ({ hashcode }));
}

/**
 * The entries of an upload answer in the order the service gave them (an entry of a JSON list
 * without a usable hashcode is marked unusable), or undefined when the body has no recognisable
 * layout. Accepts the body as text or as already parsed JSON.
 */
export function parseUploadAnswer(body: unknown): ReturnedEntry[] | undefined {
	if (body === undefined || body === null) return [];
	if (Buffer.isBuffer(body)) return fromText(body.toString('utf8'), 0);
	return typeof body === 'string' ? fromText(body, 0) : fromJson(body, 0);
}

/** The hashcode of a find answer (text, JSON string, object with a hashcode-like field). */
export function parseFindAnswer(body: unknown): string | undefined {
	const entries = parseUploadAnswer(body);
	return entries?.length === 1 ? entries[0].hashcode : undefined;
}
