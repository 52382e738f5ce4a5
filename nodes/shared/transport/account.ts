import { createHash, scrypt, scryptSync } from 'crypto';
import { NodeOperationError, sleep, type ICredentialDataDecryptedObject } from 'n8n-workflow';

import { MAX_ACCOUNTS, proveHolder, touch, type BucketTerms, type RateLimiter } from '../throttle';
import { checkBaseUrl } from './baseUrl';
import { oncePerNodeRun } from './runCache';
import { edition } from '../ports';
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
	/** Tells the account the service answered one of its requests with `status` (see provesPassword). */
	answered(status: number): void;
}

/**
 * Identifies an account (one leaky bucket at the service) without keeping its username readable
 * in process memory dumps. What the service may treat as the same account is the same key: the
 * Base URL as checkBaseUrl normalises it (scheme and host in lower case, no default port, no
 * trailing slash), and the username without surrounding spaces, in Unicode normal form and in
 * lower case. Whether the service compares usernames without regard to case is not documented;
 * taking them as one account can only make the limiter stricter, never exceed the bucket. It names
 * the bucket only: what the nodes keep for an account is keyed by holderKey.
 */
export function accountKey(baseUrl: string, username: string): string {
	const user = username.trim().normalize('NFC').toLowerCase();
	return createHash('sha256')
		.update(`${checkBaseUrl(baseUrl)}\n${user}`)
		.digest('hex');
}

/** A holder's key being derived, then derived (value), once per process. */
interface Derivation {
	key: Promise<string>;
	value?: string;
}

/** holderKey's derivations in this process, by a digest of what they are made of. */
const holderKeys = new Map<string, Derivation>();

const SCRYPT = { N: 2 ** 14, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** A holder's salt, and the key its derivation is found under in this process. */
function holderLookup(
	baseUrl: string,
	username: string,
	password: string,
): { lookup: string; salt: string } {
	const salt = `${checkBaseUrl(baseUrl)}\n${username}`;
	return { salt, lookup: createHash('sha256').update(`${salt}\n${password}`).digest('hex') };
}

/** One derivation per holder: concurrent first uses share its promise; a failed one is not kept. */
function derivationOf(baseUrl: string, username: string, password: string): Derivation {
	const { lookup, salt } = holderLookup(baseUrl, username, password);
	let derivation = holderKeys.get(lookup);
	if (derivation === undefined) {
		const made: Derivation = {
			key: new Promise<string>((resolve, reject) =>
				scrypt(password, salt, 32, SCRYPT, (error, key) =>
					error ? reject(error) : resolve(key.toString('hex')),
				),
			).then((key) => (made.value = key)),
		};
		made.key.catch(() => holderKeys.delete(lookup));
		derivation = made;
	}
	touch(holderKeys, lookup, derivation, MAX_ACCOUNTS);
	return derivation;
}

/**
 * Names whoever holds the password of an account: scrypt of the password, salted with the Base URL
 * as checkBaseUrl normalises it and the username exactly as written. What the nodes keep for an
 * account (known images, declared rate-limit terms, confirmed products) is keyed by it, so a
 * credential with the same Base URL and username but another password finds and changes none of
 * it, and the key, in Redis or n8n's database, gives neither the username nor the password back.
 * Slow on purpose (about 50 ms, then remembered in this process): whoever reads those stores must
 * not be able to test guessed passwords against it quickly. A node run derives it off the event
 * loop when it loads the account (deriveHolderOf), before any use; only a caller outside a node run
 * derives it here, waiting. Usernames are not folded: " Alice ", "ALICE" and "alice" are three
 * holders, as a service with case-sensitive usernames has three accounts.
 */
export function holderKey(baseUrl: string, username: string, password: string): string {
	const { lookup, salt } = holderLookup(baseUrl, username, password);
	const known = holderKeys.get(lookup);
	if (known?.value !== undefined) {
		touch(holderKeys, lookup, known, MAX_ACCOUNTS);
		return known.value;
	}
	// Derived here, waiting: an asynchronous derivation started beside it would only run it twice.
	const value = scryptSync(password, salt, 32, SCRYPT).toString('hex');
	const derivation = known ?? { key: Promise.resolve(value) };
	derivation.value = value;
	touch(holderKeys, lookup, derivation, MAX_ACCOUNTS);
	return value;
}

function holderParts(credentials: ICredentialDataDecryptedObject): [string, string, string] {
	const text = (value: unknown) => (typeof value === 'string' ? value : '');
	return [text(credentials.baseUrl), text(credentials.username), text(credentials.password)];
}

/** The credential's holderKey, derived off the event loop (once per holder in this process). */
export async function deriveHolderOf(credentials: ICredentialDataDecryptedObject): Promise<string> {
	return await derivationOf(...holderParts(credentials)).key;
}

/** The credential's holderKey. */
export function holderOf(credentials: ICredentialDataDecryptedObject): string {
	return holderKey(...holderParts(credentials));
}

/**
 * Names one customer node of whoever holds the credential's password (see holderOf), followed by
 * `more` (e.g. a route), by a digest: never the account's name nor the customer id, and another
 * password names another scope. What the nodes keep per customer node is keyed by it.
 */
export function customerScope(
	credentials: ICredentialDataDecryptedObject,
	customer: CustomerOverride | undefined,
	...more: string[]
): string {
	const { customerIdType, customerId } = effectiveCustomer(credentials, customer);
	return createHash('sha256')
		.update([holderOf(credentials), `${customerIdType}:${customerId}`, ...more].join('\n'))
		.digest('hex');
}

/**
 * Whether an answer shows the service accepted the password: a success (2xx) of the service's own
 * origin, the only answers its endpoints give after authenticating. Anything else may come before
 * the login is checked: a 404 or 400 of a route or a proxy, a 429 of the rate limit, a 5xx.
 */
function provesPassword(status: number): boolean {
	return status >= 200 && status < 300;
}

async function loadAccount(context: ServiceContext, itemIndex?: number): Promise<Account> {
	const credentials = await context.getCredentials<ICredentialDataDecryptedObject>(
		edition().credentialType,
		itemIndex,
	);
	// Settings that cannot work fail the node run before any request, naming their field.
	let settings: { baseUrl: string; terms: BucketTerms; timeoutMs: number };
	try {
		settings = {
			baseUrl: checkBaseUrl(credentials.baseUrl),
			terms: bucketTerms(credentials),
			timeoutMs: requestTimeoutMs(credentials),
		};
	} catch (error) {
		throw new NodeOperationError(context.getNode(), (error as Error).message, {
			itemIndex,
			level: 'warning',
		});
	}
	const { baseUrl, terms, timeoutMs } = settings;
	const username = typeof credentials.username === 'string' ? credentials.username : '';
	const key = accountKey(baseUrl, username);
	const holder = await deriveHolderOf(credentials);
	const limiter = edition().accountLimiter(key, { holder, terms }, credentials, sleep);
	let proven = false;
	return {
		baseUrl,
		origin: new URL(baseUrl).origin,
		credentials,
		limiter,
		timeoutMs,
		answered: (status) => {
			if (proven || !provesPassword(status)) return;
			proven = true;
			limiter.setTerms(proveHolder(key, holder));
		},
	};
}

/**
 * The account of this node run. Reading the credential decrypts it (and in n8n loads it from the
 * database): one read per node run is enough.
 */
export async function getAccount(context: ServiceContext, itemIndex?: number): Promise<Account> {
	return await oncePerNodeRun(
		context,
		'transport:account',
		async () => await loadAccount(context, itemIndex),
	);
}

/** The credential's data as the requests of this node run see it (no further read in a node run). */
export async function getServiceCredentials(
	context: ServiceContext,
	itemIndex?: number,
): Promise<ICredentialDataDecryptedObject> {
	return (await getAccount(context, itemIndex)).credentials;
}
