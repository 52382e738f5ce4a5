import { GcraLimiter } from './gcra';
import type { BucketTerms, RateLimiter } from './limiter';

// n8n may load the node and the trigger from separately bundled copies of this module; a global
// symbol makes them share one registry, so one account never gets two budgets in one process.
const REGISTRY_KEY = Symbol.for('n8n-nodes-product-data-integration.throttles.v1');

function registry(): Map<string, RateLimiter> {
	const holder = globalThis as unknown as Record<symbol, Map<string, RateLimiter> | undefined>;
	let map = holder[REGISTRY_KEY];
	if (!map) {
		map = new Map();
		holder[REGISTRY_KEY] = map;
	}
	return map;
}

/**
 * The process-wide limiter of one account (`accountKey`: see the transport's account module),
 * created on first use; its terms follow the credential.
 */
export function limiterFor(accountKey: string, terms: BucketTerms): RateLimiter {
	const map = registry();
	let limiter = map.get(accountKey);
	if (limiter) {
		limiter.setTerms(terms);
	} else {
		limiter = new GcraLimiter(terms);
		map.set(accountKey, limiter);
	}
	return limiter;
}
