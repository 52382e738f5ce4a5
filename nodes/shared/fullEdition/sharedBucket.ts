import type { Reservation } from './bucketScripts';
import {
	gcraSpacing,
	LimiterCancelledError,
	MAX_LIMIT_WAIT_MS,
	penaltyMs,
	waitTooLongError,
	waitWith,
	type AcquireOptions,
	type BucketTerms,
	type LimiterGrant,
	type RateLimiter,
	type Sleep,
} from '../throttle';

/*
 * The account's bucket kept in Redis, so that every n8n process using the account (queue-mode
 * workers, several mains) meters one budget: the same GCRA as the in-process limiter, with the
 * theoretical arrival time (TAT) in one Redis key, moved by Lua scripts that Redis runs atomically
 * and that read the Redis server's clock, so the processes' own clocks never matter.
 *
 * A request reserves its slot in one round trip and then sleeps until it, locally: nothing polls
 * Redis. Reservations are served in the order Redis receives them, whatever process sends them.
 */

/** What a bucket asks of its store in Redis (./bucketStore.ts), which runs the scripts on the server's clock. */
export interface BucketSchedule {
	reserve(
		key: string,
		emissionMs: number,
		toleranceMs: number,
		signal?: AbortSignal,
	): Promise<Reservation>;
	push(
		key: string,
		change: { atLeastMs?: number; byMs?: number; penalty?: boolean },
	): Promise<void>;
	release(key: string, reservedFrom: string, emissionMs: number): Promise<void>;
}

/**
 * One account's bucket in Redis. Same terms, safety margin and corrections as the in-process
 * GcraLimiter; acquire() throws RedisUnavailableError when Redis cannot be asked.
 */
export class SharedBucket implements RateLimiter {
	private terms: BucketTerms;

	/** How far (this process's clock) this process last saw the bucket booked: by its reservations and pushes. */
	private seenBookedUntil = Number.NEGATIVE_INFINITY;

	constructor(
		private readonly store: BucketSchedule,
		readonly key: string,
		terms: BucketTerms,
		private readonly sleep: Sleep,
	) {
		this.terms = { ...terms };
	}

	setTerms(terms: BucketTerms): void {
		this.terms = { ...terms };
	}

	getTerms(): BucketTerms {
		return { ...this.terms };
	}

	async acquire(options: AcquireOptions = {}): Promise<LimiterGrant> {
		const { signal, logger } = options;
		if (signal?.aborted) throw new LimiterCancelledError();
		const { emissionMs, toleranceMs } = gcraSpacing(this.terms);
		const { waitMs, leadMs, reservedFrom } = await this.store.reserve(
			this.key,
			emissionMs,
			toleranceMs,
			signal,
		);
		this.seenBookedFor(waitMs + leadMs + emissionMs);
		if (waitMs > MAX_LIMIT_WAIT_MS) {
			await this.giveBack(reservedFrom, emissionMs);
			throw waitTooLongError(
				waitMs,
				"the n8n processes sharing the account's bucket in Redis have booked it that far ahead",
			);
		}
		if (waitMs > 0) {
			logger?.debug(
				'Waiting for the shared request rate limit of the product-data integration service',
				{
					expectedWaitMs: Math.round(waitMs),
				},
			);
		}
		const waited = await waitWith(this.sleep, waitMs, signal).then(
			() => true,
			() => false,
		);
		if (!waited) {
			await this.giveBack(reservedFrom, emissionMs);
			throw new LimiterCancelledError();
		}
		const grantedAt = Date.now();
		let settled = false;
		return {
			settle: async () => {
				if (settled) return;
				settled = true;
				// As in GcraLimiter.take(): a request granted into an idle bucket may reach the
				// service late, which then drains its bucket from a later moment; move the schedule
				// by that lateness (at most max(interval, 1 s)) beyond the slot's own lead.
				const lateMs = Math.min(Date.now() - grantedAt, Math.max(emissionMs, 1000)) - leadMs;
				if (lateMs > 0) await this.store.push(this.key, { byMs: lateMs }).catch(() => undefined);
			},
		};
	}

	/**
	 * The service refused a request (429/503): the bucket counts as full until `retryAfterMs` (or
	 * one interval) from now, for every process.
	 */
	async penalize(retryAfterMs?: number): Promise<void> {
		const ms = penaltyMs(retryAfterMs, gcraSpacing(this.terms));
		await this.store.push(this.key, { atLeastMs: ms, penalty: true });
		this.seenBookedFor(ms);
	}

	/**
	 * Only Redis knows how far the shared bucket is booked. A process that cannot ask it goes by
	 * what it saw last (the slots booked then are still to be sent), and counts the bucket full at
	 * least: the other processes may have filled it meanwhile.
	 */
	bookedAheadMs(): number {
		return Math.max(
			this.terms.capacity * gcraSpacing(this.terms).emissionMs,
			this.seenBookedUntil - Date.now(),
		);
	}

	/**
	 * Adds to the shared schedule what this process booked alone while Redis was away (`backlogMs`:
	 * how far its own requests still book the bucket), on top of what the others booked meanwhile.
	 */
	async addBacklog(backlogMs: number): Promise<void> {
		if (backlogMs <= 0) return;
		await this.store.push(this.key, { atLeastMs: backlogMs, byMs: backlogMs });
	}

	private seenBookedFor(ms: number): void {
		this.seenBookedUntil = Math.max(this.seenBookedUntil, Date.now() + ms);
	}

	private async giveBack(reservedFrom: string, emissionMs: number): Promise<void> {
		await this.store.release(this.key, reservedFrom, emissionMs).catch(() => undefined);
	}
}
