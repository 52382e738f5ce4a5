/*
 * The credential's fields for where the bucket of its account lives, in the full edition: Rate
 * Limit Sharing and the Redis server it may name (../../../credentials/rateLimitSharing.ts). The
 * verified edition (n8n Cloud) is built with ./rateLimitSharingFields.verified.ts in its place.
 */

export { sharingProperties } from '../../../credentials/rateLimitSharing';
