import type { INodeProperties } from 'n8n-workflow';

/*
 * What the verified edition's credential declares of itself, built in place of ./edition.ts. Its
 * own type name keeps it apart from the full edition's credential when both packages are
 * installed (n8n would otherwise keep one definition for both).
 */

export const CREDENTIAL_NAME = 'productDataIntegrationVerifiedApi';

export const CREDENTIAL_DISPLAY_NAME = 'Product Data Integration Verified API';

/** No fields for where the account's bucket lives: in the n8n process. */
export const sharingProperties: INodeProperties[] = [];
