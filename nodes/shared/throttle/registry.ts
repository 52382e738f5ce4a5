import { AdaptiveLimiter } from './adaptive';
import { GcraLimiter, realClock } from './gcra';
import { DEFAULT_TERMS, type BucketTerms } from './limiter';
import type { Sleep } from './time';

// The limiters of this process, in both editions. The full edition's bucket shared between
// processes (../fullEdition/sharedRegistry.ts) builds on them; the verified edition has them alone.

/**
 * How many accounts this process keeps limiters for: the ones handed out least recently go
 * beyond it (an edited credential's Base URL or username is another account, an edited Redis
 * login another store), so that edits do not add up for as long as n8n runs.
 */
export const MAX_ACCOUNTS = 100;

/** Moves `key` to the end of `map` (most recently used), forgetting the least recent beyond `max`. */
export function touch<V>(
	map: Map<string, V>,
	key: string,
	value: V,
	max: number,
	forget: (value: V) => void = () => undefined,
): void {
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

/** Declarations kept per account: each credential (password and terms) in use is one. */
const MAX_DECLARATIONS = 100;

/**
 * Terms a credential declares for its account. `holder` names whoever holds the credential's
 * password (a keyed digest of it, see the transport's account module), so that a credential with
 * another password cannot change the terms the account is metered by.
 */
export interface TermsDeclaration {
	holder: string;
	terms: BucketTerms;
}

interface AccountDeclarations {
	/** "holder capacity/intervalMs" -> the declaration, when last used. */
	declared: Map<string, TermsDeclaration & { lastUsed: number }>;
	/** The holders whose password the service has accepted (see proveHolder). */
	proven: Set<string>;
}

const declarations = new Map<string, AccountDeclarations>();

/** The strictest of the terms: the smallest burst and the slowest leak any of them allows. */
function strictestTerms(terms: BucketTerms[]): BucketTerms {
	return {
		capacity: Math.min(...terms.map((t) => t.capacity)),
		intervalMs: Math.max(...terms.map((t) => t.intervalMs)),
	};
}

function declarationsOf(accountKey: string): AccountDeclarations {
	const account = declarations.get(accountKey) ?? {
		declared: new Map(),
		proven: new Set<string>(),
	};
	touch(declarations, accountKey, account, MAX_ACCOUNTS);
	return account;
}

/**
 * The terms that hold requests back least in the long run: the fastest leak, then the largest burst.
 * One declaration whole, never one made of the fields of several.
 */
function loosestTerms(terms: BucketTerms[]): BucketTerms {
	return terms.reduce((loosest, t) =>
		t.intervalMs < loosest.intervalMs ||
		(t.intervalMs === loosest.intervalMs && t.capacity > loosest.capacity)
			? t
			: loosest,
	);
}

/**
 * Two credentials of one account may declare different terms: the account works with the strictest
 * that any credential used within the last hour declares, counting only those whose password the
 * service has accepted. Until it has accepted one, no declaration may hold another credential back:
 * the account then goes by the loosest of the standard terms and those declared (see loosestTerms),
 * and the service's refusals (429) slow it down if they are too loose.
 */
function termsInForce(account: AccountDeclarations, now: number): BucketTerms {
	for (const [key, { lastUsed }] of account.declared) {
		if (now - lastUsed > TERMS_MEMORY_MS) account.declared.delete(key);
	}
	const declared = [...account.declared.values()];
	const holders = new Set(declared.map((entry) => entry.holder));
	for (const holder of account.proven) if (!holders.has(holder)) account.proven.delete(holder);
	const counted = declared
		.filter((entry) => account.proven.has(entry.holder))
		.map((entry) => entry.terms);
	return {
		...(counted.length > 0
			? strictestTerms(counted)
			: loosestTerms([DEFAULT_TERMS, ...declared.map((entry) => entry.terms)])),
	};
}

// One module instance per n8n process: n8n loads the node and the trigger from the same package
// folder, so both reach this map through Node's module cache, and one account never gets two
// budgets in one process.
const limiters = new Map<string, AdaptiveLimiter>();

/**
 * The in-process limiter of one account (`accountKey`: see the transport's account module), created
 * on first use; its terms are the strictest its credentials declare (see termsInForce), `declaration`
 * among them. Its waits are made of `sleep`.
 */
export function processLimiterFor(
	accountKey: string,
	declaration: TermsDeclaration,
	sleep: Sleep,
	now = Date.now(),
): AdaptiveLimiter {
	const account = declarationsOf(accountKey);
	const { holder, terms: declared } = declaration;
	touch(
		account.declared,
		`${holder} ${declared.capacity}/${declared.intervalMs}`,
		{ holder, terms: declared, lastUsed: now },
		MAX_DECLARATIONS,
	);
	const terms = termsInForce(account, now);
	let limiter = limiters.get(accountKey);
	if (limiter) {
		limiter.setTerms(terms);
	} else {
		limiter = new AdaptiveLimiter(new GcraLimiter(terms, realClock(sleep)), terms);
	}
	touch(limiters, accountKey, limiter, MAX_ACCOUNTS);
	return limiter;
}

/**
 * The service accepted the password of `holder` (an answer other than 401/403): the terms it
 * declares count for the account from now on. The account's terms now, for its limiters.
 */
export function proveHolder(accountKey: string, holder: string, now = Date.now()): BucketTerms {
	const account = declarationsOf(accountKey);
	account.proven.add(holder);
	return termsInForce(account, now);
}
