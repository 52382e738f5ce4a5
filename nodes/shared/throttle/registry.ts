import { AdaptiveLimiter } from './adaptive';
import { GcraLimiter, realClock } from './gcra';
import type { BucketTerms, RateLimiter } from './limiter';
import { connectionId, SharedBucketStore, type RedisConnection } from './redisBucket';
import { SharedLimiter, UnsharedLimiter } from './shared';
import type { Sleep } from './time';

const stores = new Map<string, SharedBucketStore>();

/** The process's one store (connection) for a Redis server and login, created on first use. */
export function storeFor(connection: RedisConnection): SharedBucketStore {
	const id = connectionId(connection);
	let store = stores.get(id);
	if (!store) {
		store = new SharedBucketStore(connection, id);
		stores.set(id, store);
	}
	return store;
}

/** Closes every store of the process (tests, benchmarks: a process that ends on its own). */
export async function closeStores(): Promise<void> {
	const open = [...stores.values()];
	stores.clear();
	await Promise.all(open.map(async (store) => await store.close()));
}

/**
 * Forgets the store of a connection no account uses any more (e.g. the Redis password was edited):
 * its connection is closed; whoever still holds it connects again if they use it.
 */
function forgetStore(id: string): void {
	stores.get(id)?.disconnect();
	stores.delete(id);
}

/** Where an account's bucket lives for this process. */
export interface SharingDecision {
	/** Undefined: the in-process limiter. */
	connection?: RedisConnection;
	/** Why a shared store that would be expected is not used, for the log and the node's output. */
	notice?: string;
}

/**
 * How many accounts this process keeps limiters for: the ones handed out least recently go
 * beyond it (an edited credential's Base URL or username is another account, an edited Redis
 * login another store), so that edits do not add up for as long as n8n runs.
 */
const MAX_ACCOUNTS = 100;

/** Moves `key` to the end of `map` (most recently used), forgetting the least recent beyond `max`. */
function touch<V>(map: Map<string, V>, key: string, value: V, max: number, forget: (value: V) => void = () => undefined): void {
	map.delete(key);
	map.set(key, value);
	for (const [oldest, entry] of map) {
		if (map.size <= max) break;
		map.delete(oldest);
		forget(entry);
	}
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
	const account = declared.get(accountKey) ?? new Map<string, { terms: BucketTerms; lastUsed: number }>();
	touch(declared, accountKey, account, MAX_ACCOUNTS);
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
	}
	touch(limiters, accountKey, limiter, MAX_ACCOUNTS);
	return limiter;
}

// Several processes coordinate through Redis, not through this map: it only keeps one fallback
// state per account in this process, for the Redis server its credential names last.
const sharedLimiters = new Map<string, { storeId: string; limiter: SharedLimiter }>();

/**
 * Disconnects a store no kept account uses any more. A limiter handed out before still works with
 * it: the store connects again if asked, as after Redis went away.
 */
function releaseUnused(storeId: string): void {
	if ([...sharedLimiters.values()].some((entry) => entry.storeId === storeId)) return;
	forgetStore(storeId);
}

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
	const kept = sharedLimiters.get(accountKey);
	let limiter: SharedLimiter;
	if (kept?.storeId === store.id) {
		limiter = kept.limiter;
		limiter.setTerms(terms);
	} else {
		limiter = new SharedLimiter(local, store.bucket(accountKey, terms, sleep));
	}
	touch(sharedLimiters, accountKey, { storeId: store.id, limiter }, MAX_ACCOUNTS, (entry) => releaseUnused(entry.storeId));
	if (kept && kept.storeId !== store.id) releaseUnused(kept.storeId);
	return limiter;
}
