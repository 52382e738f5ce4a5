import type { INodeProperties } from 'n8n-workflow';

/*
 * The credential's fields for where the bucket of its account lives, in the verified edition,
 * built in place of ./rateLimitSharing.ts: none, the bucket lives in the n8n process
 * (nodes/shared/transport/bucketHome.verified.ts).
 */

export const sharingProperties: INodeProperties[] = [];
