import { AdaptiveLimiter } from './adaptive';
import { GcraLimiter, realClock } from './gcra';
import type { BucketTerms, RateLimiter } from './limiter';
import { storeFor, type RedisConnection } from './redisBucket';
import { SharedLimiter, UnsharedLimiter } from './shared';
import type { Sleep } from './time';

/** Where an account's bucket lives for this process. */
export interface SharingDecision {
	/** Undefined: the in-process limiter. */
	connection?: RedisConnection;
	/** Why a shared store that would be expected is not used, for the log and the node's output. */
	notice?: string;
}

/**
 * Terms a credential declared are kept this long after it was last used: an edited credential's
 * old terms stop counting, while two credentials in use for one account both count.
 */
const TERMS_MEMORY_MS = 60 * 60_000;

/** Terms declared by the credentials of each account: "capacity/intervalMs" -> terms, last used. */
const declared = new Map<string, Map<string, { terms: BucketTerms; lastUsed: number }>>();

/** The strictest of the terms: the smallest burst and the slowest leak any of them allows. */
export function strictestTerms(terms: BucketTerms[]): BucketTerms {
	return {
		capacity: Math.min(...terms.map((t) => t.capacity)),
		intervalMs: Math.max(...terms.map((t) => t.intervalMs)),
	};
}

/**
 * Two credentials of one account may declare different terms: the account works with the
 * strictest that any credential used within the last hour declares.
 */
function accountTerms(accountKey: string, terms: BucketTerms, now: number): BucketTerms {
	let account = declared.get(accountKey);
	if (!account) {
		account = new Map();
		declared.set(accountKey, account);
	}
	account.set(`${terms.capacity}/${terms.intervalMs}`, { terms, lastUsed: now });
	for (const [key, { lastUsed }] of account) {
		if (now - lastUsed > TERMS_MEMORY_MS) account.delete(key);
	}
	return strictestTerms([...account.values()].map((entry) => entry.terms));
}

// One module instance per n8n process: n8n loads the node and the trigger from the same package
// folder, so both reach this map through Node's module cache, and one account never gets two
// budgets in one process.
const limiters = new Map<string, AdaptiveLimiter>();

/** The in-process limiter of one account, created on first use. */
function localLimiterFor(accountKey: string, terms: BucketTerms, sleep: Sleep): AdaptiveLimiter {
	let limiter = limiters.get(accountKey);
	if (limiter) {
		limiter.setTerms(terms);
	} else {
		limiter = new AdaptiveLimiter(new GcraLimiter(terms, realClock(sleep)), terms);
		limiters.set(accountKey, limiter);
	}
	return limiter;
}

// Several processes coordinate through Redis, not through this map: it only keeps one fallback
// state per account and Redis server in this process.
const sharedLimiters = new Map<string, SharedLimiter>();

/**
 * The limiter of one account (`accountKey`: see the transport's account module) for this process,
 * created on first use; its terms are the strictest its credentials declare. With a shared store
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
	const terms = accountTerms(accountKey, declaredTerms, now);
	const local = localLimiterFor(accountKey, terms, sleep);
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
