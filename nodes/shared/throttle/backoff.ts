/**
 * Parses Retry-After: delta seconds (fractions accepted) or an HTTP date.
 * Returns milliseconds from `now`, never negative; undefined when absent or unreadable.
 */
export function parseRetryAfter(value: unknown, now: number = Date.now()): number | undefined {
	const text = Array.isArray(value) ? value[0] : value;
	if (typeof text !== 'string' || text.trim() === '') return undefined;
	const trimmed = text.trim();
	if (/^\d+(\.\d+)?$/.test(trimmed)) {
		return Math.round(Number(trimmed) * 1000);
	}
	// An HTTP date names its weekday and month; bare numbers such as "-3" are not dates.
	const date = /[a-z]{3}/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
	if (Number.isNaN(date)) return undefined;
	return Math.max(0, date - now);
}

/**
 * How long to hold the account back after a refusal that carried Retry-After. The header has a
 * resolution of one second and a server rounds up, so "1" means "somewhere within the next
 * second". When the leak interval is a second or longer the header is honoured as given; when it
 * is shorter, the full second would idle many slots, so the wait is the stated time less that
 * second of rounding, but at least one interval.
 */
export function retryAfterPenalty(
	retryAfterMs: number | undefined,
	intervalMs: number,
): number | undefined {
	if (retryAfterMs === undefined || intervalMs >= 1000) return retryAfterMs;
	return Math.min(retryAfterMs, Math.max(retryAfterMs - 1000, intervalMs));
}

/**
 * Exponential backoff with jitter: attempt 1 waits between base/2 and base, each further attempt
 * doubles the range, capped at maxMs. Jitter keeps callers that failed together from retrying
 * together.
 */
export function backoffDelay(
	attempt: number,
	baseMs: number,
	maxMs: number,
	random: () => number = Math.random,
): number {
	const ceiling = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
	return ceiling / 2 + (random() * ceiling) / 2;
}
