import type { IHttpRequestOptions } from 'n8n-workflow';

import type { Exchange } from './types';

/** Response headers as one lower-case name to one string, whatever shape the HTTP layer gave. */
export function normalizeHeaders(headers: unknown): Record<string, string> {
	const result: Record<string, string> = {};
	if (typeof headers !== 'object' || headers === null) return result;
	const plain =
		typeof (headers as { toJSON?: unknown }).toJSON === 'function'
			? (headers as { toJSON: () => object }).toJSON()
			: headers;
	for (const [name, value] of Object.entries(plain)) {
		if (value === undefined || value === null) continue;
		result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
	}
	return result;
}

/**
 * How n8n's request helper is asked for an answer: whole (status and headers), whatever its
 * status, without following a redirect (each hop is judged, and following one would make the HTTP
 * layer keep a streamed body to send it again), its body a stream read as it arrives (readBytes,
 * readAnswer), so that no answer is held whole.
 */
export const STREAMED_ANSWER = {
	returnFullResponse: true,
	ignoreHttpStatusErrors: true,
	disableFollowRedirect: true,
	maxRedirects: 0,
	encoding: 'stream',
	json: false,
} as const satisfies Partial<IHttpRequestOptions>;

/** The most of an answer that is read: an answer of the service is small, a larger one is not its. */
export const DEFAULT_ANSWER_LIMIT_BYTES = 1024 * 1024;

export interface AnswerText {
	text: string;
	/** The answer was longer than the limit: only its beginning was read, the rest never was. */
	truncated: boolean;
}

/**
 * Reads a body up to `limitBytes`: memory stays bounded whatever the other side sends, and the
 * rest is not read (the connection is closed). A body handed over whole is cut the same way.
 */
export async function readBytes(
	body: unknown,
	limitBytes: number,
): Promise<{ bytes: Buffer; truncated: boolean }> {
	if (body === undefined || body === null) return { bytes: Buffer.alloc(0), truncated: false };
	if (typeof body === 'string' || Buffer.isBuffer(body)) {
		const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
		return { bytes: bytes.subarray(0, limitBytes), truncated: bytes.length > limitBytes };
	}
	if (typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] !== 'function') {
		return await readBytes(JSON.stringify(body), limitBytes);
	}
	const chunks: Buffer[] = [];
	let size = 0;
	let truncated = false;
	// Leaving the loop early ends the stream: the rest of a long body is never read.
	for await (const chunk of body as AsyncIterable<Buffer | string>) {
		const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, 'utf8');
		if (size + bytes.length > limitBytes) {
			chunks.push(bytes.subarray(0, limitBytes - size));
			truncated = true;
			break;
		}
		chunks.push(bytes);
		size += bytes.length;
	}
	return { bytes: Buffer.concat(chunks), truncated };
}

/** An answer body as text, read as readBytes reads it. */
export async function readAnswer(body: unknown, limitBytes: number): Promise<AnswerText> {
	const { bytes, truncated } = await readBytes(body, limitBytes);
	return { text: bytes.toString('utf8'), truncated };
}

/** "1 MiB", "32 MiB", "512 KiB": a limit in messages. */
export function describeBytes(bytes: number): string {
	return bytes >= 1024 * 1024
		? `${Math.round(bytes / (1024 * 1024))} MiB`
		: `${Math.round(bytes / 1024)} KiB`;
}

/**
 * The deepest nesting of arrays and objects read from the service. Its answers are a few levels
 * deep; JSON nested far deeper (500,000 levels fit in 1 MiB) parses, but overflows the stack of
 * whatever walks it later: JSON.stringify, n8n's copies of an item, its database.
 */
const MAX_JSON_DEPTH = 64;

/** JSON text nested deeper than MAX_JSON_DEPTH: a SyntaxError, as any text that is not JSON. */
class JsonTooDeepError extends SyntaxError {
	constructor() {
		super(`JSON nested more than ${MAX_JSON_DEPTH} levels deep`);
		this.name = 'JsonTooDeepError';
	}
}

/** Whether JSON text nests arrays and objects deeper than `limit` (brackets inside strings do not count). */
function nestsDeeperThan(text: string, limit: number): boolean {
	let depth = 0;
	let inString = false;
	for (let index = 0; index < text.length; index++) {
		const char = text[index];
		if (inString) {
			if (char === '\\') index++;
			else if (char === '"') inString = false;
		} else if (char === '"') {
			inString = true;
		} else if (char === '[' || char === '{') {
			if (++depth > limit) return true;
		} else if (char === ']' || char === '}') {
			depth--;
		}
	}
	return false;
}

/** Throws a JsonTooDeepError for text from the service nested deeper than MAX_JSON_DEPTH. */
function checkJsonDepth(text: string): void {
	if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw new JsonTooDeepError();
}

/** JSON.parse for text from the service: nesting deeper than MAX_JSON_DEPTH throws a JsonTooDeepError. */
export function parseServiceJson(text: string): unknown {
	checkJsonDepth(text);
	return JSON.parse(text);
}

/**
 * An answer as the request asked for it; text that is not JSON stays text. JSON nested too deep
 * throws a JsonTooDeepError, the one error this throws.
 */
export function parseBody(text: string, responseType: Exchange['responseType']): unknown {
	if (responseType === 'none') return undefined;
	if (responseType === 'text') return text;
	if (text.trim() === '') return undefined;
	checkJsonDepth(text);
	try {
		return JSON.parse(text);
	} catch {
		return text;
	}
}

/** The most of the service's own words that a message, a warning or a log line carries. */
export const SERVICE_TEXT_LIMIT = 300;

/**
 * Text from the service made fit for an error, an item's warning or a log line: control characters
 * (a line break would start a forged line in n8n's log) become spaces, and a longer text is cut to
 * `maxLength` characters, the cut marked with an ellipsis.
 */
export function cleanServiceText(text: string, maxLength = SERVICE_TEXT_LIMIT): string {
	const clean = text.replace(/[\p{Cc}\u2028\u2029]/gu, ' ').trim();
	return clean.length <= maxLength
		? clean
		: `${clean.slice(0, maxLength - 1).replace(/[\ud800-\udbff]$/, '')}…`;
}

/**
 * The service's own words for an error: the `message` of its JSON body, or a short plain text;
 * cleaned and cut as cleanServiceText does.
 */
export function serviceMessage(text: string): string | undefined {
	try {
		const parsed = parseServiceJson(text);
		if (typeof parsed === 'object' && parsed !== null) {
			const { message, Message } = parsed as { message?: unknown; Message?: unknown };
			const said = message ?? Message;
			if (typeof said === 'string' && said.trim() !== '')
				return cleanServiceText(said) || undefined;
		}
		if (typeof parsed === 'string' && parsed.trim() !== '')
			return cleanServiceText(parsed) || undefined;
		return undefined;
	} catch {
		const trimmed = text.trim();
		if (trimmed === '' || trimmed.length > SERVICE_TEXT_LIMIT || trimmed.startsWith('<'))
			return undefined;
		return cleanServiceText(trimmed) || undefined;
	}
}

/**
 * Whether an answer is a refusal that asks to come back: every 429, and a 503 that says when
 * (Retry-After), whatever its words. By HTTP's meaning the request was not handled, so it may be
 * sent again, an upload too. A 503 without Retry-After is the service (or a proxy in front of it)
 * failing, after which an upload may or may not have been stored.
 */
export function isRefusal(status: number, retryAfterMs: number | undefined): boolean {
	return status === 429 || (status === 503 && retryAfterMs !== undefined);
}
