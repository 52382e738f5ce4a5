import {
	MAX_ACCOUNTS,
	processLimiterFor,
	touch,
	type RateLimiter,
	type Sleep,
	type TermsDeclaration,
} from '../throttle';
import { connectionId, SharedBucketStore, type RedisConnection } from './bucketStore';
import { SharedLimiter, UnsharedLimiter } from './sharedLimiter';

// The bucket an account's processes share through Redis, on top of each process's own limiter
// (../throttle/registry.ts). Only the full edition has it: the verified one is built without this folder.

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
 * created on first use; its terms are the strictest its credentials declare (`declaration` among
 * them, see the throttle's registry). With a shared store
 * (`sharing`, from the credential and n8n's queue-mode settings) it meters the bucket every process
 * of the account shares, with this process's own limiter as fallback. Its waits are made of `sleep`.
 */
export function limiterFor(
	accountKey: string,
	declaration: TermsDeclaration,
	sharing: SharingDecision,
	sleep: Sleep,
	now = Date.now(),
): RateLimiter {
	const local = processLimiterFor(accountKey, declaration, sleep, now);
	const terms = local.getTerms();
	if (!sharing.connection)
		return sharing.notice ? new UnsharedLimiter(local, sharing.notice) : local;
	const store = storeFor(sharing.connection);
	const kept = sharedLimiters.get(accountKey);
	let limiter: SharedLimiter;
	if (kept?.storeId === store.id) {
		limiter = kept.limiter;
		limiter.setTerms(terms);
	} else {
		limiter = new SharedLimiter(local, store.bucket(accountKey, terms, sleep));
	}
	touch(sharedLimiters, accountKey, { storeId: store.id, limiter }, MAX_ACCOUNTS, (entry) =>
		releaseUnused(entry.storeId),
	);
	if (kept && kept.storeId !== store.id) releaseUnused(kept.storeId);
	return limiter;
}
