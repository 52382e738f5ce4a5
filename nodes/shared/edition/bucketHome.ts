import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import type { RateLimiter, Sleep, TermsDeclaration } from '../throttle';
import { limiterFor } from '../fullEdition/sharedRegistry';
import { sharingFor } from '../fullEdition/sharing';

/*
 * Where an account's bucket can live, for the full edition: in this process, or in Redis shared by
 * every n8n process of the account, as the credential's Rate Limit Sharing and n8n's queue-mode
 * settings decide. The verified edition (n8n Cloud) is built with ./bucketHome.verified.ts in its
 * place: the same signature, the bucket in this process only.
 */

/** The limiter of the account `accountKey` for this n8n process; `declaration`: the terms the credential declares. */
export function accountLimiter(
	accountKey: string,
	declaration: TermsDeclaration,
	credentials: ICredentialDataDecryptedObject,
	sleep: Sleep,
): RateLimiter {
	return limiterFor(accountKey, declaration, sharingFor(credentials), sleep);
}
