import type { SharedKnownImages } from '../knownImages/knownImages';

/*
 * Where the known images can be shared, for the verified edition (n8n Cloud), built in place of
 * ./knownImagesHome.ts: nowhere, since n8n's rules for verified packages allow no Redis client.
 * They are kept in this process, and the node's output says so.
 */

/** Nothing to advise: this edition has no shared store. */
export const SHARING_ADVICE = '';

export const sharedKnownImages: SharedKnownImages | undefined = undefined;
