import { createHash } from 'crypto';
import { NodeOperationError, sleep, type ICredentialDataDecryptedObject } from 'n8n-workflow';

import type { BucketTerms, RateLimiter } from '../throttle';
import { checkBaseUrl } from './baseUrl';
import { accountLimiter } from './bucketHome';
import { oncePerNodeRun } from './context';
import { CREDENTIAL_NAME } from './edition';
import { bucketTerms, requestTimeoutMs } from './settings';
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
	// Settings that cannot work fail the node run before any request, naming their field.
	let settings: { baseUrl: string; terms: BucketTerms; timeoutMs: number };
	try {
		settings = { baseUrl: checkBaseUrl(credentials.baseUrl), terms: bucketTerms(credentials), timeoutMs: requestTimeoutMs(credentials) };
	} catch (error) {
		throw new NodeOperationError(context.getNode(), (error as Error).message, {
			itemIndex,
			level: 'warning',
		});
	}
	const { baseUrl, terms, timeoutMs } = settings;
	const username = typeof credentials.username === 'string' ? credentials.username : '';
	return {
		baseUrl,
		origin: new URL(baseUrl).origin,
		credentials,
		limiter: accountLimiter(accountKey(baseUrl, username), terms, credentials, sleep),
		timeoutMs,
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
