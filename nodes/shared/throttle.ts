import { createHash } from 'crypto';

/**
 * Client-side model of the service's leaky bucket, as a GCRA (generic cell rate algorithm):
 * emission interval T = leak interval, burst tolerance tau = (capacity - 1) * T.
 * A request may go when `now >= TAT - tau`; it then moves `TAT = max(TAT, now) + T`.
 *
 * One limiter exists per account (base URL + username) for the whole n8n process, so every node,
 * trigger and execution that uses the same account shares the same budget.
 */

export interface BucketTerms {
	capacity: number;
	intervalMs: number;
}

export interface ThrottleClock {
	now(): number;
	setTimeout(callback: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
}

export interface ThrottleLogger {
	debug(message: string, meta?: Record<string, unknown>): void;
}

export interface AcquireOptions {
	signal?: AbortSignal;
	logger?: ThrottleLogger;
}

export const DEFAULT_TERMS: BucketTerms = { capacity: 50, intervalMs: 5000 };

/**
 * Requests leave slightly slower than the server drains, so that latency jitter between two
 * requests does not make the later one arrive "early" and bounce off a full bucket.
 */
export const SAFETY_MARGIN = 0.01;

const realClock: ThrottleClock = {
	now: () => Date.now(),
	setTimeout: (callback, ms) => setTimeout(callback, ms),
	clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class ThrottleCancelledError extends Error {
	constructor() {
		super('The execution was cancelled while waiting for the rate limit');
		this.name = 'ThrottleCancelledError';
	}
}

/**
 * Permission to send one request. Call settle() once the service answered (or the exchange
 * failed): the limiter uses it to correct its idea of when the service saw the request.
 */
export interface ThrottleGrant {
	settle(): void;
}

interface Waiter {
	resolve: (grant: ThrottleGrant) => void;
	reject: (error: Error) => void;
	signal?: AbortSignal;
	onAbort?: () => void;
}

function checkTerms(terms: BucketTerms): BucketTerms {
	const capacity = Math.floor(terms.capacity);
	if (!Number.isFinite(capacity) || capacity < 1) {
		throw new RangeError('Bucket capacity must be at least 1');
	}
	if (!Number.isFinite(terms.intervalMs) || terms.intervalMs <= 0) {
		throw new RangeError('Leak interval must be greater than 0');
	}
	return { capacity, intervalMs: terms.intervalMs };
}

export class RequestThrottle {
	private emissionMs = 0;

	private toleranceMs = 0;

	private terms: BucketTerms = DEFAULT_TERMS;

	/** Theoretical arrival time: when the bucket, as far as this client knows, is empty again. */
	private tat = Number.NEGATIVE_INFINITY;

	private readonly queue: Waiter[] = [];

	private timer: unknown;

	private timerDueAt = Number.POSITIVE_INFINITY;

	/** Total of every later correction of TAT, so a grant can tell how far its slot has moved. */
	private shifted = 0;

	constructor(
		terms: BucketTerms = DEFAULT_TERMS,
		private readonly clock: ThrottleClock = realClock,
	) {
		this.setTerms(terms);
	}

	/** Applies edited credential terms to the running limiter without forgetting what was sent. */
	setTerms(terms: BucketTerms): void {
		const checked = checkTerms(terms);
		if (checked.capacity === this.terms.capacity && checked.intervalMs === this.terms.intervalMs && this.emissionMs > 0) {
			return;
		}
		this.terms = checked;
		this.emissionMs = checked.intervalMs * (1 + SAFETY_MARGIN);
		this.toleranceMs = (checked.capacity - 1) * this.emissionMs;
		this.schedule();
	}

	getTerms(): BucketTerms {
		return { ...this.terms };
	}

	get waiting(): number {
		return this.queue.length;
	}

	/** Milliseconds until a request arriving now would be allowed to go (0 = at once). */
	delayFor(now = this.clock.now()): number {
		return Math.max(0, this.tat - this.toleranceMs - now);
	}

	/**
	 * Resolves when one request may be sent. Waiters are served in arrival order. An aborted wait
	 * rejects with ThrottleCancelledError and takes no slot.
	 */
	async acquire(options: AcquireOptions = {}): Promise<ThrottleGrant> {
		const { signal, logger } = options;
		if (signal?.aborted) {
			throw new ThrottleCancelledError();
		}
		const now = this.clock.now();
		if (this.queue.length === 0 && now >= this.tat - this.toleranceMs) {
			return this.take(now);
		}
		const expectedWaitMs = Math.round(this.delayFor(now) + this.queue.length * this.emissionMs);
		logger?.debug('Waiting for the request rate limit of the product-data integration service', {
			expectedWaitMs,
			queued: this.queue.length + 1,
		});
		return await new Promise<ThrottleGrant>((resolve, reject) => {
			const waiter: Waiter = { resolve, reject, signal };
			if (signal) {
				waiter.onAbort = () => this.cancel(waiter);
				signal.addEventListener('abort', waiter.onAbort, { once: true });
			}
			this.queue.push(waiter);
			this.schedule();
		});
	}

	/**
	 * The server said its bucket is full (429/503). Whatever this client believed, the next
	 * request must wait `retryAfterMs` (or one interval when the server did not say) and the
	 * burst allowance is gone: requests resume at one per interval.
	 */
	penalize(retryAfterMs?: number): void {
		const waitMs =
			retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0
				? retryAfterMs
				: this.emissionMs;
		const tat = Math.max(this.tat, this.clock.now() + waitMs + this.toleranceMs);
		this.moveTat(tat);
	}

	private moveTat(tat: number): void {
		if (tat <= this.tat) return;
		if (Number.isFinite(this.tat)) this.shifted += tat - this.tat;
		this.tat = tat;
		this.schedule();
	}

	/**
	 * GCRA counts a request at the moment it is granted; the service counts it when it arrives,
	 * which can be any time until its answer is back. Late arrival only matters for a request whose
	 * slot was "now" (the bucket was idle, or nearly): the service's bucket then drains from a later
	 * moment than this client assumes, and the requests after it would arrive early. A slow first
	 * request (cold connection, busy event loop) is the typical case. So on its answer, the
	 * schedule moves by how late the request may have been - at most max(interval, 1 s), since a
	 * request is counted when it starts, and a long upload takes long only after that.
	 */
	private take(now: number): ThrottleGrant {
		const slot = Math.max(this.tat, now);
		this.tat = slot + this.emissionMs;
		const shiftedAtGrant = this.shifted;
		let settled = false;
		return {
			settle: () => {
				if (settled) return;
				settled = true;
				const seenBy = Math.min(this.clock.now(), now + Math.max(this.emissionMs, 1000));
				const currentSlot = slot + (this.shifted - shiftedAtGrant);
				if (seenBy > currentSlot) this.moveTat(this.tat + (seenBy - currentSlot));
			},
		};
	}

	private cancel(waiter: Waiter): void {
		const index = this.queue.indexOf(waiter);
		if (index === -1) return;
		this.queue.splice(index, 1);
		waiter.reject(new ThrottleCancelledError());
		this.schedule();
	}

	private drain(): void {
		this.timer = undefined;
		this.timerDueAt = Number.POSITIVE_INFINITY;
		while (this.queue.length > 0) {
			const now = this.clock.now();
			if (now < this.tat - this.toleranceMs) break;
			const waiter = this.queue.shift() as Waiter;
			if (waiter.signal && waiter.onAbort) {
				waiter.signal.removeEventListener('abort', waiter.onAbort);
			}
			waiter.resolve(this.take(now));
		}
		this.schedule();
	}

	/** Keeps exactly one timer, due when the head of the queue may go. */
	private schedule(): void {
		if (this.queue.length === 0) {
			this.clearTimer();
			return;
		}
		const dueAt = Math.max(this.tat - this.toleranceMs, this.clock.now());
		if (this.timer !== undefined && this.timerDueAt === dueAt) return;
		this.clearTimer();
		this.timerDueAt = dueAt;
		this.timer = this.clock.setTimeout(() => this.drain(), Math.ceil(dueAt - this.clock.now()));
	}

	private clearTimer(): void {
		if (this.timer !== undefined) {
			this.clock.clearTimeout(this.timer);
			this.timer = undefined;
			this.timerDueAt = Number.POSITIVE_INFINITY;
		}
	}
}

/** Identifies an account without keeping its username readable in process memory dumps. */
export function accountKey(baseUrl: string, username: string): string {
	return createHash('sha256').update(`${baseUrl.replace(/\/+$/, '')}\n${username}`).digest('hex');
}

// n8n may load the node and the trigger from separately bundled copies of this module; a global
// symbol makes them share one registry, so one account never gets two budgets in one process.
const REGISTRY_KEY = Symbol.for('n8n-nodes-product-data-integration.throttles.v1');

function registry(): Map<string, RequestThrottle> {
	const holder = globalThis as unknown as Record<symbol, Map<string, RequestThrottle> | undefined>;
	let map = holder[REGISTRY_KEY];
	if (!map) {
		map = new Map();
		holder[REGISTRY_KEY] = map;
	}
	return map;
}

/** The process-wide limiter of one account, created on first use; terms follow the credential. */
export function throttleFor(baseUrl: string, username: string, terms: BucketTerms): RequestThrottle {
	const key = accountKey(baseUrl, username);
	const map = registry();
	let throttle = map.get(key);
	if (throttle) {
		throttle.setTerms(terms);
	} else {
		throttle = new RequestThrottle(terms);
		map.set(key, throttle);
	}
	return throttle;
}

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
export function retryAfterPenalty(retryAfterMs: number | undefined, intervalMs: number): number | undefined {
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
