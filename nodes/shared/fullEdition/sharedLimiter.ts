import { RedisUnavailableError } from './bucketStore';
import { RedisBackOff } from './redisBackOff';
import type { SharedBucket } from './sharedBucket';
import type {
	AcquireOptions,
	BucketTerms,
	LimiterGrant,
	RateLimiter,
	ScheduleHandOver,
} from '../throttle';

/**
 * The account's limiter when its bucket is shared between processes: every request reserves its
 * slot in Redis. While Redis cannot be asked, the process's own limiter takes over at once (nothing
 * waits for Redis, nothing is lost), the n8n log says so once and every request served that way
 * hears of it (AcquireOptions.notice); Redis is used again as soon as it answers.
 *
 * The two hand the schedule to each other. The process's own limiter does not know what the other
 * processes sent, so it goes on from the schedule last seen in Redis, and at least as if the bucket
 * were full (one request per interval, its burst allowance coming back only as time passes without
 * requests), instead of bursting into a bucket the others may have filled. Back in Redis, the
 * requests it sent meanwhile are added to the shared schedule (as far as they still book the
 * bucket), so they count and nothing bursts; its guess of the others' part is not, as Redis knows it.
 */
export class SharedLimiter implements RateLimiter {
	/** Why requests go through the in-process limiter; undefined while the shared bucket serves them. */
	private fallbackReason: string | undefined;

	/** After Redis failed, requests stay with the in-process limiter for a while before Redis is asked again. */
	private readonly backOff: RedisBackOff;

	/** Until when the requests this process sent alone book the bucket (a GCRA of its own, on `now`). */
	private sentAloneUntil = 0;

	constructor(
		private readonly local: RateLimiter & ScheduleHandOver,
		private readonly shared: SharedBucket,
		private readonly now: () => number = Date.now,
	) {
		this.backOff = new RedisBackOff(now);
	}

	getTerms(): BucketTerms {
		return this.local.getTerms();
	}

	setTerms(terms: BucketTerms): void {
		this.local.setTerms(terms);
		this.shared.setTerms(terms);
	}

	async acquire(options: AcquireOptions = {}): Promise<LimiterGrant> {
		if (this.backOff.due) {
			const outcome = await this.acquireShared(options).then(
				(grant) => ({ grant }),
				(error: unknown) => ({ error }),
			);
			if ('grant' in outcome) {
				if (this.fallbackReason !== undefined) {
					this.fallbackReason = undefined;
					options.logger?.info?.(
						"The shared rate limit in Redis is available again: all n8n processes share the account's bucket",
					);
				}
				return outcome.grant;
			}
			const { error } = outcome;
			if (!(error instanceof RedisUnavailableError)) throw error;
			const entering = this.fallbackReason === undefined;
			this.fallbackReason = error.reason;
			this.backOff.failed();
			if (entering) {
				options.logger?.warn?.(
					`The shared rate limit in Redis is unavailable: ${error.reason}. Until it is back, this n8n process limits its own requests to the product-data integration service; refusals (429) from the service slow it down`,
				);
				await this.local.bookAhead(this.shared.bookedAheadMs());
			}
		}
		options.notice?.(
			`The shared rate limit in Redis was unavailable (${this.fallbackReason}): requests were limited by this n8n process alone`,
		);
		const grant = await this.local.acquire(options);
		this.sentAloneUntil =
			Math.max(this.sentAloneUntil, this.now()) + this.shared.getTerms().intervalMs;
		return grant;
	}

	private async acquireShared(options: AcquireOptions): Promise<LimiterGrant> {
		if (this.fallbackReason !== undefined) {
			await this.shared.addBacklog(this.sentAloneUntil - this.now());
			this.sentAloneUntil = 0;
		}
		return await this.shared.acquire(options);
	}

	async penalize(retryAfterMs?: number): Promise<void> {
		await this.local.penalize(retryAfterMs);
		if (this.fallbackReason === undefined)
			await this.shared.penalize(retryAfterMs).catch(() => undefined);
	}
}

/**
 * The in-process limiter of an account whose set-up asks for sharing that cannot be had (e.g. a
 * Redis cluster): it limits as usual and says why it does so alone.
 */
export class UnsharedLimiter implements RateLimiter {
	constructor(
		private readonly local: RateLimiter,
		private readonly reason: string,
	) {}

	getTerms(): BucketTerms {
		return this.local.getTerms();
	}

	setTerms(terms: BucketTerms): void {
		this.local.setTerms(terms);
	}

	async acquire(options: AcquireOptions = {}): Promise<LimiterGrant> {
		options.notice?.(this.reason);
		return await this.local.acquire(options);
	}

	async penalize(retryAfterMs?: number): Promise<void> {
		await this.local.penalize(retryAfterMs);
	}
}
