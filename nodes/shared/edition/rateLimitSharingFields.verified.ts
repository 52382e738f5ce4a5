import type { INodeProperties } from 'n8n-workflow';

/*
 * The credential's fields for where the bucket of its account lives, in the verified edition,
 * built in place of ./rateLimitSharingFields.ts: none, the bucket lives in the n8n process
 * (./bucketHome.verified.ts).
 */

export const sharingProperties: INodeProperties[] = [];
