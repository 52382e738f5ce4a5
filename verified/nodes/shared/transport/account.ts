import { createHash } from 'crypto';
import { NodeOperationError, sleep, type ICredentialDataDecryptedObject } from 'n8n-workflow';

import { DEFAULT_TERMS, type BucketTerms, type RateLimiter } from '../throttle';
import { checkBaseUrl } from './baseUrl';
import { accountLimiter } from './bucketHome';
import { oncePerNodeRun } from './context';
import { CREDENTIAL_NAME } from './edition';
import type { CustomerOverride, ServiceContext } from './types';

/** The customer node a request acts on: the override if there is one, else the credential's. */
export function effectiveCustomer(
	credentials: ICredentialDataDecryptedObject,
	override: CustomerOverride | undefined,
): CustomerOverride {
	return (
		override ?? {
			customerId: String(credentials.customerId ?? ''),
			customerIdType: credentials.customerIdType === 'ExternalID' ? 'ExternalID' : 'ServiceID',
		}
	);
}

/** The credential as the requests of one node run use it. */
export interface Account {
	baseUrl: string;
	origin: string;
	credentials: ICredentialDataDecryptedObject;
	limiter: RateLimiter;
	/** How long one exchange may take to connect and to answer. */
	timeoutMs: number;
}

export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 60;

/** The credential's Request Timeout (Seconds), in milliseconds. */
export function requestTimeoutMs(credentials: ICredentialDataDecryptedObject): number {
	const seconds = Number(credentials.requestTimeoutSeconds ?? DEFAULT_REQUEST_TIMEOUT_SECONDS);
	return (Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_REQUEST_TIMEOUT_SECONDS) * 1000;
}

/** Bucket terms of the credential: the standard terms unless the account has its own. */
export function bucketTerms(credentials: ICredentialDataDecryptedObject): BucketTerms {
	if (credentials.customRateLimit !== true) return DEFAULT_TERMS;
	const capacity = Number(credentials.bucketCapacity ?? DEFAULT_TERMS.capacity);
	const seconds = Number(credentials.leakIntervalSeconds ?? DEFAULT_TERMS.intervalMs / 1000);
	return {
		capacity: Number.isFinite(capacity) && capacity >= 1 ? Math.floor(capacity) : DEFAULT_TERMS.capacity,
		intervalMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : DEFAULT_TERMS.intervalMs,
	};
}

/**
 * Identifies an account (one leaky bucket at the service) without keeping its username readable
 * in process memory dumps. What the service may treat as the same account is the same key: the
 * Base URL as checkBaseUrl normalises it (scheme and host in lower case, no default port, no
 * trailing slash), and the username without surrounding spaces, in Unicode normal form and in
 * lower case. Whether the service compares usernames without regard to case is not documented;
 * taking them as one account can only make the limiter stricter, never exceed the bucket.
 */
export function accountKey(baseUrl: string, username: string): string {
	const user = username.trim().normalize('NFC').toLowerCase();
	return createHash('sha256').update(`${checkBaseUrl(baseUrl)}\n${user}`).digest('hex');
}

async function loadAccount(context: ServiceContext, itemIndex?: number): Promise<Account> {
	const credentials = await context.getCredentials<ICredentialDataDecryptedObject>(
		CREDENTIAL_NAME,
		itemIndex,
	);
	let baseUrl: string;
	try {
		baseUrl = checkBaseUrl(credentials.baseUrl);
	} catch (error) {
		throw new NodeOperationError(context.getNode(), (error as Error).message, {
			itemIndex,
			level: 'warning',
		});
	}
	const username = typeof credentials.username === 'string' ? credentials.username : '';
	return {
		baseUrl,
		origin: new URL(baseUrl).origin,
		credentials,
		limiter: accountLimiter(accountKey(baseUrl, username), bucketTerms(credentials), credentials, sleep),
		timeoutMs: requestTimeoutMs(credentials),
	};
}

/**
 * The account of this node run. Reading the credential decrypts it (and in n8n loads it from the
 * database): one read per node run is enough.
 */
export async function getAccount(context: ServiceContext, itemIndex?: number): Promise<Account> {
	return await oncePerNodeRun(context, 'transport:account', async () => await loadAccount(context, itemIndex));
}

/** The credential's data as the requests of this node run see it (no further read in a node run). */
export async function getServiceCredentials(
	this: ServiceContext,
	itemIndex?: number,
): Promise<ICredentialDataDecryptedObject> {
	return (await getAccount(this, itemIndex)).credentials;
}
