import type { BucketTerms, RateLimiter } from './limiter';
import { storeFor, type RedisConnection } from './redisBucket';
import { processLimiterFor } from './registry';
import { SharedLimiter, UnsharedLimiter } from './shared';
import type { Sleep } from './time';

/** Where an account's bucket lives for this process. */
export interface SharingDecision {
	/** Undefined: the in-process limiter. */
	connection?: RedisConnection;
	/** Why a shared store that would be expected is not used, for the log and the node's output. */
	notice?: string;
}

// Several processes coordinate through Redis, not through this map: it only keeps one fallback
// state per account and Redis server in this process.
const sharedLimiters = new Map<string, SharedLimiter>();

/**
 * The limiter of one account for this process: its in-process limiter (./registry.ts). With a shared store
 * (`sharing`, from the credential and n8n's queue-mode settings) it meters the bucket every process
 * of the account shares, with this process's own limiter as fallback. Its waits are made of `sleep`.
 */
export function limiterFor(
	accountKey: string,
	declaredTerms: BucketTerms,
	sharing: SharingDecision,
	sleep: Sleep,
	now = Date.now(),
): RateLimiter {
	const local = processLimiterFor(accountKey, declaredTerms, sleep, now);
	const terms = local.getTerms();
	if (!sharing.connection) return sharing.notice ? new UnsharedLimiter(local, sharing.notice) : local;
	const store = storeFor(sharing.connection);
	const key = `${accountKey}\n${store.id}`;
	let limiter = sharedLimiters.get(key);
	if (limiter) {
		limiter.setTerms(terms);
	} else {
		limiter = new SharedLimiter(local, store.bucket(accountKey, terms, sleep));
		sharedLimiters.set(key, limiter);
	}
	return limiter;
}
