/**
 * What the transport needs from a rate limiter. One limiter stands for one account of the service
 * (see registry.ts): every node, trigger and execution using the account shares its budget. The
 * in-process GCRA (gcra.ts) is one implementation; one shared between processes can be another.
 */

import { describeWait } from './time';

/** The service's leaky bucket: `capacity` requests at once, then one every `intervalMs`. */
export interface BucketTerms {
	capacity: number;
	intervalMs: number;
}

export const DEFAULT_TERMS: BucketTerms = { capacity: 50, intervalMs: 5000 };

/**
 * The longest a request waits for the account's rate limit: a Retry-After longer than this fails
 * its request (the transport), and so does a slot further ahead (the limiters), so the rate limit
 * never holds an execution up longer.
 */
export const MAX_LIMIT_WAIT_MS = 15 * 60_000;

/** A request that would wait `waitMs` (more than MAX_LIMIT_WAIT_MS) for its slot fails with this. */
export function waitTooLongError(waitMs: number, why: string): Error {
	const most = describeWait(MAX_LIMIT_WAIT_MS);
	// Rounded to minutes, a wait just beyond the longest would read as the longest itself.
	const wait = describeWait(waitMs) === most ? `more than ${most}` : describeWait(waitMs);
	return new Error(
		`The request would wait ${wait} for the account's rate limit (${why}); a request waits at most ${most}`,
	);
}

export interface LimiterLogger {
	debug(message: string, meta?: Record<string, unknown>): void;
	info?(message: string, meta?: Record<string, unknown>): void;
	warn?(message: string, meta?: Record<string, unknown>): void;
}

export interface AcquireOptions {
	signal?: AbortSignal;
	logger?: LimiterLogger;
	/**
	 * Told when the request is limited less well than the account's set-up asks (e.g. the shared
	 * bucket in Redis is unreachable), for the user to see in the node's output.
	 */
	notice?: (message: string) => void;
}

/**
 * Permission to send one request. Call settle() once the service answered (or the exchange
 * failed): the limiter uses it to correct its idea of when the service saw the request.
 */
export interface LimiterGrant {
	settle(): Promise<void>;
}

export interface RateLimiter {
	/**
	 * Resolves when one request may be sent, in arrival order. An aborted wait rejects with
	 * LimiterCancelledError and takes no slot.
	 */
	acquire(options?: AcquireOptions): Promise<LimiterGrant>;
	/**
	 * The service refused a request because its bucket is full (429/503): the next request waits
	 * `retryAfterMs` (one interval when the service did not say) and the burst allowance is gone.
	 */
	penalize(retryAfterMs?: number): Promise<void>;
	/** The terms the limiter works with. */
	getTerms(): BucketTerms;
	/** Applies edited credential terms without forgetting what was sent. */
	setTerms(terms: BucketTerms): void;
}

/**
 * A limiter that can take over a schedule: in the full edition, the process's own limiter goes on
 * from the one last seen in the bucket shared in Redis when Redis goes away (see
 * ../fullEdition/sharedLimiter.ts); the verified edition has no such hand-over.
 */
export interface ScheduleHandOver {
	/**
	 * Counts the bucket booked at least until `ms` from now (a later schedule stays). Unlike
	 * penalize(), this tells of no refusal.
	 */
	bookAhead(ms: number): Promise<void>;
}

export class LimiterCancelledError extends Error {
	constructor() {
		super('The execution was cancelled while waiting for the rate limit');
		this.name = 'LimiterCancelledError';
	}
}

export function checkTerms(terms: BucketTerms): BucketTerms {
	const capacity = Math.floor(terms.capacity);
	if (!Number.isFinite(capacity) || capacity < 1) {
		throw new RangeError('Bucket capacity must be at least 1');
	}
	if (!Number.isFinite(terms.intervalMs) || terms.intervalMs <= 0) {
		throw new RangeError('Leak interval must be greater than 0');
	}
	return { capacity, intervalMs: terms.intervalMs };
}
