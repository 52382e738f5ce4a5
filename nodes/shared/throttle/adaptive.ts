import type {
	AcquireOptions,
	BucketTerms,
	LimiterGrant,
	RateLimiter,
	ScheduleHandOver,
} from './limiter';

/** At most this many times slower than the account's terms. */
const MAX_SLOWDOWN = 16;
/** Changes of the pace smaller than this are not applied (each change recomputes the limiter). */
const STEP = 0.05;

/**
 * A process that meters an account alone, while others use it too (several n8n processes without
 * a shared store, another tool), learns of them only from the service's refusals. One refusal (or
 * a few together: the requests in flight at that moment) is what a bucket filled once by someone
 * else looks like, and the penalty alone handles it. Refusals that come again, a second or more
 * after the last ones but within twice the time the bucket takes to drain, mean the account is
 * shared: each such refusal halves this process's pace, which recovers by half of what it lost
 * every time a full bucket would have drained. Several such processes so settle near their share
 * of the bucket instead of refusing each other's requests until the requests run out of attempts.
 */
export class AdaptiveLimiter implements RateLimiter, ScheduleHandOver {
	private slowdown = 1;

	private slowedAt = Number.NEGATIVE_INFINITY;

	/** When the last refusals came (refusals within a second of it count as the same). */
	private refusedAt = Number.NEGATIVE_INFINITY;

	private applied = 1;

	constructor(
		private readonly inner: RateLimiter & ScheduleHandOver,
		private terms: BucketTerms,
		private readonly now: () => number = Date.now,
	) {}

	/** The account's terms; the pace in use may be slower. */
	getTerms(): BucketTerms {
		return { ...this.terms };
	}

	setTerms(terms: BucketTerms): void {
		this.terms = { ...terms };
		this.apply(this.currentSlowdown(), true);
	}

	async acquire(options?: AcquireOptions): Promise<LimiterGrant> {
		const slowdown = this.currentSlowdown();
		if (Math.abs(slowdown - this.applied) > STEP) this.apply(slowdown);
		return await this.inner.acquire(options);
	}

	async penalize(retryAfterMs?: number): Promise<void> {
		const now = this.now();
		const sinceLastRefusals = now - this.refusedAt;
		if (sinceLastRefusals >= Math.max(1000, this.terms.intervalMs)) {
			if (sinceLastRefusals <= 2 * this.terms.capacity * this.terms.intervalMs) {
				this.slowdown = Math.min(MAX_SLOWDOWN, this.currentSlowdown() * 2);
				this.slowedAt = now;
				// The slower pace first: the penalty then counts the bucket full at that pace.
				this.apply(this.slowdown);
			}
			this.refusedAt = now;
		}
		await this.inner.penalize(retryAfterMs);
	}

	async bookAhead(ms: number): Promise<void> {
		await this.inner.bookAhead(ms);
	}

	/** Halves the excess over the account's pace every time a full bucket would have drained. */
	private currentSlowdown(): number {
		const drainMs = this.terms.capacity * this.terms.intervalMs;
		const elapsed = this.now() - this.slowedAt;
		const slowdown = 1 + (this.slowdown - 1) * 0.5 ** (elapsed / drainMs);
		return slowdown < 1 + STEP ? 1 : slowdown;
	}

	private apply(slowdown: number, force = false): void {
		if (!force && slowdown === this.applied) return;
		this.applied = slowdown;
		this.inner.setTerms({
			capacity: this.terms.capacity,
			intervalMs: this.terms.intervalMs * slowdown,
		});
	}
}
