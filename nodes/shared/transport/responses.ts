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

export function bodyText(body: unknown): string {
	if (body === undefined || body === null) return '';
	if (typeof body === 'string') return body;
	if (Buffer.isBuffer(body)) return body.toString('utf8');
	return JSON.stringify(body);
}

export function parseBody(text: string, responseType: Exchange['responseType']): unknown {
	if (responseType === 'none') return undefined;
	if (responseType === 'text') return text;
	if (text.trim() === '') return undefined;
	try {
		return JSON.parse(text);
	} catch {
		return text;
	}
}

/** The service's own words for an error: the `message` of its JSON body, or a short plain text. */
export function serviceMessage(text: string): string | undefined {
	try {
		const parsed = JSON.parse(text) as unknown;
		if (typeof parsed === 'object' && parsed !== null) {
			const { message, Message } = parsed as { message?: unknown; Message?: unknown };
			const said = message ?? Message;
			if (typeof said === 'string' && said.trim() !== '') return said.trim();
		}
		if (typeof parsed === 'string' && parsed.trim() !== '') return parsed.trim();
		return undefined;
	} catch {
		const trimmed = text.trim();
		if (trimmed === '' || trimmed.length > 300 || trimmed.startsWith('<')) return undefined;
		return trimmed;
	}
}

/**
 * Whether an answer is the service's full bucket: every 429, and a 503 that says when to come back
 * (Retry-After) without calling itself unavailable. A 503 without Retry-After is the service (or a
 * proxy in front of it) being down, not the rate limit.
 */
export function isRateLimitRefusal(status: number, retryAfterMs: number | undefined, text: string): boolean {
	if (status === 429) return true;
	if (status !== 503 || retryAfterMs === undefined) return false;
	return !/unavailable|maintenance/i.test(serviceMessage(text) ?? '');
}

/** A wait for messages: "45 s", "15 min", "24 h", "3 days". */
export function describeWait(ms: number): string {
	const seconds = Math.round(ms / 1000);
	if (seconds < 120) return `${seconds} s`;
	if (seconds < 2 * 3600) return `${Math.round(seconds / 60)} min`;
	if (seconds < 2 * 86_400) return `${Math.round(seconds / 3600)} h`;
	return `${Math.round(seconds / 86_400)} days`;
}
