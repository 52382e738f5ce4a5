/**
 * The credential that the demo (`npm start`) and the end-to-end tests import into n8n: one account
 * of an emulator. Its id and name are fixed so that the workflows in `examples/` can name it:
 *
 *   "credentials": { "productDataIntegrationApi": { "id": "pdiEmulatorCreds", "name": "Product Data Integration (emulator)" } }
 */
import { CREDENTIAL_TYPE } from './edition';

export { CREDENTIAL_TYPE };

export const EMULATOR_CREDENTIAL = {
	id: 'pdiEmulatorCreds',
	name: 'Product Data Integration (emulator)',
} as const;

export interface CredentialData {
	environment: 'production' | 'test';
	baseUrl: string;
	username: string;
	password: string;
	customerId: string;
	customerIdType: 'ServiceID' | 'ExternalID';
	customRateLimit: boolean;
	requestTimeoutSeconds?: number;
	bucketCapacity?: number;
	leakIntervalSeconds?: number;
	rateLimitSharing?: 'automatic' | 'redis' | 'process';
	redisHost?: string;
	redisPort?: number;
	redisPassword?: string;
}

/** One entry of an `n8n import:credentials` file; `data` in clear text, n8n encrypts it on import. */
export interface CredentialImport {
	id: string;
	name: string;
	type: string;
	data: CredentialData;
}

/**
 * The emulator credential for an emulator at `baseUrl`: customer 1001 of the default account unless
 * `overrides` say otherwise (e.g. another environment, or the emulator's own bucket settings).
 */
export function emulatorCredential(
	baseUrl: string,
	account: { username: string; password: string },
	overrides: Partial<CredentialData> = {},
): CredentialImport {
	return {
		...EMULATOR_CREDENTIAL,
		type: CREDENTIAL_TYPE,
		data: {
			environment: 'production',
			baseUrl,
			username: account.username,
			password: account.password,
			customerId: '1001',
			customerIdType: 'ServiceID',
			customRateLimit: false,
			...overrides,
		},
	};
}

/**
 * Rate Limit Sharing in a redis-server on 127.0.0.1 (scripts/redis.ts): also where Only Changed
 * Products remembers a catalogue read page by page.
 */
export function sharingInRedis(redis: {
	port: number;
	password?: string;
}): Partial<CredentialData> {
	return {
		rateLimitSharing: 'redis',
		redisHost: '127.0.0.1',
		redisPort: redis.port,
		...(redis.password && { redisPassword: redis.password }),
	};
}
