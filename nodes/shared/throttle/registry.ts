import { AdaptiveLimiter } from './adaptive';
import { GcraLimiter, realClock } from './gcra';
import type { BucketTerms } from './limiter';
import type { Sleep } from './time';

// The limiters of this process, in both editions. The full edition's bucket shared between
// processes (../redis/sharedRegistry.ts) builds on them; the verified edition has them alone.

/**
 * How many accounts this process keeps limiters for: the ones handed out least recently go
 * beyond it (an edited credential's Base URL or username is another account, an edited Redis
 * login another store), so that edits do not add up for as long as n8n runs.
 */
export const MAX_ACCOUNTS = 100;

/** Moves `key` to the end of `map` (most recently used), forgetting the least recent beyond `max`. */
export function touch<V>(map: Map<string, V>, key: string, value: V, max: number, forget: (value: V) => void = () => undefined): void {
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
function strictestTerms(terms: BucketTerms[]): BucketTerms {
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

/**
 * The in-process limiter of one account (`accountKey`: see the transport's account module), created
 * on first use; its terms are the strictest its credentials declare. Its waits are made of `sleep`.
 */
export function processLimiterFor(accountKey: string, declaredTerms: BucketTerms, sleep: Sleep, now = Date.now()): AdaptiveLimiter {
	const terms = accountTerms(accountKey, declaredTerms, now);
	let limiter = limiters.get(accountKey);
	if (limiter) {
		limiter.setTerms(terms);
	} else {
		limiter = new AdaptiveLimiter(new GcraLimiter(terms, realClock(sleep)), terms);
	}
	touch(limiters, accountKey, limiter, MAX_ACCOUNTS);
	return limiter;
}
