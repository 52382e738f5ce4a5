import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import {
	processLimiterFor,
	type RateLimiter,
	type Sleep,
	type TermsDeclaration,
} from '../throttle';

/*
 * Where an account's bucket can live, for the verified edition (n8n Cloud), built in place of
 * ./bucketHome.ts: in this process only. n8n's rules for verified packages allow no Redis client
 * and no reading of the environment, so other processes on the same account are not seen; the
 * adaptive limiter answers their refusals (429) by slowing down, never by failing.
 */

/** The limiter of the account `accountKey` for this n8n process; `declaration`: the terms the credential declares. */
export function accountLimiter(
	accountKey: string,
	declaration: TermsDeclaration,
	_credentials: ICredentialDataDecryptedObject,
	sleep: Sleep,
): RateLimiter {
	return processLimiterFor(accountKey, declaration, sleep);
}
