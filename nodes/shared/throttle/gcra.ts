import {
	checkTerms,
	DEFAULT_TERMS,
	LimiterCancelledError,
	MAX_LIMIT_WAIT_MS,
	waitTooLongError,
	type AcquireOptions,
	type BucketTerms,
	type LimiterGrant,
	type RateLimiter,
	type ScheduleHandOver,
} from './limiter';
import { waitWith, type Sleep } from './time';

/**
 * Client-side model of the service's leaky bucket, as a GCRA (generic cell rate algorithm):
 * emission interval T = leak interval, burst tolerance tau = (capacity - 1) * T.
 * A request may go when `now >= TAT - tau`; it then moves `TAT = max(TAT, now) + T`.
 * It knows only what this process sent.
 */

export interface LimiterClock {
	now(): number;
	setTimeout(callback: () => void, ms: number): unknown;
	clearTimeout(handle: unknown): void;
}

/**
 * Requests leave slightly slower than the server drains, so that latency jitter between two
 * requests does not make the later one arrive "early" and bounce off a full bucket.
 */
export const SAFETY_MARGIN = 0.01;

/** The GCRA's spacing for a bucket: one request per emission interval, bursts within the tolerance. */
export interface GcraSpacing {
	emissionMs: number;
	toleranceMs: number;
}

export function gcraSpacing(terms: BucketTerms): GcraSpacing {
	const emissionMs = terms.intervalMs * (1 + SAFETY_MARGIN);
	return { emissionMs, toleranceMs: (terms.capacity - 1) * emissionMs };
}

/** How far from now a refusal books the bucket: full, then its Retry-After (or one interval) more. */
export function penaltyMs(
	retryAfterMs: number | undefined,
	{ emissionMs, toleranceMs }: GcraSpacing,
): number {
	const waitMs =
		retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0
			? retryAfterMs
			: emissionMs;
	return waitMs + toleranceMs;
}

/** The clock of the real world, its timers made of `sleep`. */
export function realClock(sleep: Sleep): LimiterClock {
	return {
		now: () => Date.now(),
		setTimeout: (callback, ms) => {
			const timer = new AbortController();
			waitWith(sleep, ms, timer.signal).then(callback, () => undefined);
			return timer;
		},
		clearTimeout: (handle) => (handle as AbortController).abort(),
	};
}

interface Waiter {
	/** When it has waited MAX_LIMIT_WAIT_MS. */
	deadline: number;
	resolve: (grant: LimiterGrant) => void;
	reject: (error: Error) => void;
	signal?: AbortSignal;
	onAbort?: () => void;
}

export class GcraLimiter implements RateLimiter, ScheduleHandOver {
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
		terms: BucketTerms,
		private readonly clock: LimiterClock,
	) {
		this.setTerms(terms);
	}

	setTerms(terms: BucketTerms): void {
		const checked = checkTerms(terms);
		if (
			checked.capacity === this.terms.capacity &&
			checked.intervalMs === this.terms.intervalMs &&
			this.emissionMs > 0
		) {
			return;
		}
		this.terms = checked;
		({ emissionMs: this.emissionMs, toleranceMs: this.toleranceMs } = gcraSpacing(checked));
		this.schedule();
	}

	getTerms(): BucketTerms {
		return { ...this.terms };
	}

	/** Milliseconds until a request arriving now would be allowed to go (0 = at once). */
	delayFor(now = this.clock.now()): number {
		return Math.max(0, this.tat - this.toleranceMs - now);
	}

	async acquire(options: AcquireOptions = {}): Promise<LimiterGrant> {
		const { signal, logger } = options;
		if (signal?.aborted) {
			throw new LimiterCancelledError();
		}
		const now = this.clock.now();
		if (this.queue.length === 0 && now >= this.tat - this.toleranceMs) {
			return this.take(now);
		}
		const expectedWaitMs = Math.round(this.delayFor(now) + this.queue.length * this.emissionMs);
		if (expectedWaitMs > MAX_LIMIT_WAIT_MS) {
			throw waitTooLongError(
				expectedWaitMs,
				"this n8n process's requests and the service's refusals have booked the account's bucket that far ahead",
			);
		}
		logger?.debug('Waiting for the request rate limit of the product-data integration service', {
			expectedWaitMs,
			queued: this.queue.length + 1,
		});
		return await new Promise<LimiterGrant>((resolve, reject) => {
			const waiter: Waiter = { deadline: now + MAX_LIMIT_WAIT_MS, resolve, reject, signal };
			if (signal) {
				waiter.onAbort = () => this.cancel(waiter);
				signal.addEventListener('abort', waiter.onAbort, { once: true });
			}
			this.queue.push(waiter);
			this.schedule();
		});
	}

	async penalize(retryAfterMs?: number): Promise<void> {
		await this.bookAhead(
			penaltyMs(retryAfterMs, { emissionMs: this.emissionMs, toleranceMs: this.toleranceMs }),
		);
	}

	async bookAhead(ms: number): Promise<void> {
		this.moveTat(this.clock.now() + ms);
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
	private take(now: number): LimiterGrant {
		const slot = Math.max(this.tat, now);
		this.tat = slot + this.emissionMs;
		const shiftedAtGrant = this.shifted;
		let settled = false;
		return {
			settle: async () => {
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
		waiter.reject(new LimiterCancelledError());
		this.schedule();
	}

	/**
	 * Grants the waiters whose turn has come. A waiter whose turn was pushed back after it came
	 * (penalties, a slower pace) fails once it has waited MAX_LIMIT_WAIT_MS: waiters arrive in
	 * order, so the head's deadline is always the first.
	 */
	private drain(): void {
		this.timer = undefined;
		this.timerDueAt = Number.POSITIVE_INFINITY;
		while (this.queue.length > 0) {
			const now = this.clock.now();
			const turn = now >= this.tat - this.toleranceMs;
			if (!turn && now < this.queue[0].deadline) break;
			const waiter = this.queue.shift() as Waiter;
			if (waiter.signal && waiter.onAbort) {
				waiter.signal.removeEventListener('abort', waiter.onAbort);
			}
			if (turn) {
				waiter.resolve(this.take(now));
			} else {
				waiter.reject(
					waitTooLongError(
						MAX_LIMIT_WAIT_MS + this.delayFor(now),
						'refusals of the service or a slower pace pushed its turn back',
					),
				);
			}
		}
		this.schedule();
	}

	/** Keeps exactly one timer, due when the head of the queue may go or has waited too long. */
	private schedule(): void {
		if (this.queue.length === 0) {
			this.clearTimer();
			return;
		}
		const dueAt = Math.min(
			Math.max(this.tat - this.toleranceMs, this.clock.now()),
			this.queue[0].deadline,
		);
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
