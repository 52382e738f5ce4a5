/*
 * What the full edition's credential declares of itself. n8n names a credential type without its
 * package's name (node types get it as a prefix), so two installed packages that declare one
 * credential type share a single definition, the one n8n loads last: each edition has its own.
 * The verified edition (n8n Cloud) is built with ./edition.verified.ts in its place.
 */

export const CREDENTIAL_NAME = 'productDataIntegrationApi';

export const CREDENTIAL_DISPLAY_NAME = 'Product Data Integration API';

/** Rate Limit Sharing and the Redis server it may name. */
export { sharingProperties } from './rateLimitSharing';
