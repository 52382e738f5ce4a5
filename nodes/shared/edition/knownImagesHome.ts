import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { RedisKnownImages } from '../fullEdition/knownImages';
import { sharingFor } from '../fullEdition/sharing';
import type { SharedKnownImages } from '../knownImages/knownImages';
import { holderOf } from '../transport';

/*
 * Where the known images can be shared, for the full edition: the Redis the account shares its
 * rate limit through (queue mode, or Rate Limit Sharing set to Redis). The verified edition (n8n
 * Cloud) is built with ./knownImagesHome.verified.ts in its place: nowhere, so this process only.
 */

/** What a run remembering its known images in the process only is told it could do instead. */
export const SHARING_ADVICE =
	' With Redis (queue mode, or Rate Limit Sharing set to Redis in the credential) they are kept there for every process.';

/** In the Redis of the account's rate limit, where it has one. */
export const sharedKnownImages: SharedKnownImages | undefined = (
	credentials: ICredentialDataDecryptedObject,
	scope: string,
	ageMs: number,
) => {
	const { connection } = sharingFor(credentials);
	return connection
		? new RedisKnownImages(connection, holderOf(credentials), scope, ageMs)
		: undefined;
};
