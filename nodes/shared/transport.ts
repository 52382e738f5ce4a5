import type { Readable } from 'stream';
import type FormData from 'form-data';
import {
	NodeApiError,
	NodeOperationError,
	type ICredentialDataDecryptedObject,
	type IDataObject,
	type IExecuteFunctions,
	type IHttpRequestMethods,
	type IHttpRequestOptions,
	type ILoadOptionsFunctions,
	type IN8nHttpFullResponse,
	type INode,
	type IPollFunctions,
	type JsonObject,
} from 'n8n-workflow';

import {
	backoffDelay,
	parseRetryAfter,
	RequestThrottle,
	retryAfterPenalty,
	ThrottleCancelledError,
	type ThrottleGrant,
	throttleFor,
	type BucketTerms,
	DEFAULT_TERMS,
} from './throttle';

export const CREDENTIAL_NAME = 'productDataIntegrationApi';

export type ServiceContext = IExecuteFunctions | IPollFunctions | ILoadOptionsFunctions;

export interface CustomerOverride {
	customerId: string;
	customerIdType: 'ServiceID' | 'ExternalID';
}

export type RequestBody = Buffer | string | Readable | FormData;

export interface ServiceRequest {
	method: IHttpRequestMethods;
	/** '/api/...' relative to the credential's base URL. */
	path: string;
	qs?: IDataObject;
	/**
	 * Streams (and FormData, which is a stream) are sent as they are read, never buffered, and so
	 * can be sent only once: a request that must be repeated (e.g. after a 429) fails instead.
	 * Pass a function that creates the body to let such a request be repeated.
	 */
	body?: RequestBody | (() => RequestBody);
	headers?: IDataObject;
	/** Replaces the credential's customer headers for this call. */
	customer?: CustomerOverride;
	/** Named in errors. */
	itemIndex?: number;
	/** Default 'json': JSON when the body parses as JSON, otherwise the text; empty body = undefined. */
	responseType?: 'json' | 'text' | 'none';
	/** Statuses handed back instead of thrown (e.g. [404], [202, 301]). */
	allowStatus?: number[];
}

export interface ServiceResponse<T = unknown> {
	statusCode: number;
	headers: Record<string, string>;
	body: T;
}

/** Attempts of one request that the service refuses with 429/503 before giving up. */
export const MAX_RATE_LIMIT_ATTEMPTS = 6;
/** Attempts of one GET/HEAD that fails with a 5xx or a broken connection before giving up. */
export const MAX_FAILURE_ATTEMPTS = 3;
const FAILURE_BACKOFF_BASE_MS = 500;
const MAX_BACKOFF_MS = 60_000;
/** A Retry-After longer than this is not waited for inside a running execution. */
const MAX_RETRY_AFTER_MS = 15 * 60_000;

/** The credential's Environment is what a 401 most often gets wrong: a password of the other one. */
function authDescription(environment: unknown): string {
	const name = environment === 'test' ? 'Development/Test' : 'Production';
	return `Check that the username and password are the ones issued for the ${name} environment (the credential's Environment), that the Base URL is that environment's address, and the customer ID and its type (ServiceID or ExternalID)`;
}
const AMBIGUOUS_DESCRIPTION =
	'It was not sent again automatically, because a second upload could duplicate the first. List the uploads of today to see whether it arrived before sending it again.';

interface Account {
	baseUrl: string;
	origin: string;
	credentials: ICredentialDataDecryptedObject;
	throttle: RequestThrottle;
}

interface Exchange {
	method: IHttpRequestMethods;
	url: string;
	qs?: IDataObject;
	body?: RequestBody | (() => RequestBody);
	headers?: IDataObject;
	customer?: CustomerOverride;
	itemIndex?: number;
	responseType: 'json' | 'text' | 'none';
	allowStatus: number[];
	/** Sent with the credential and through the account's limiter; false for foreign origins. */
	authenticated: boolean;
}

function isLoopbackHost(hostname: string): boolean {
	const host = hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
	return (
		host === 'localhost' ||
		host === '::1' ||
		/^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
		/^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host)
	);
}

/**
 * Parses the credential's base URL. The password travels with every request, so plain http is
 * refused except to this machine. Returns the URL without a trailing slash.
 */
export function checkBaseUrl(value: unknown): string {
	const text = typeof value === 'string' ? value.trim() : '';
	if (text === '') {
		throw new Error('The Base URL of the credential is empty');
	}
	let url: URL;
	try {
		url = new URL(text);
	} catch {
		throw new Error('The Base URL of the credential is not a valid URL (e.g. https://integration.example.com)');
	}
	if (url.username !== '' || url.password !== '') {
		throw new Error('The Base URL of the credential must not contain a username or password: use the credential fields');
	}
	if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
		throw new Error(
			`The Base URL of the credential must start with https:// (plain http:// is only allowed for localhost, 127.0.0.1 and ::1), because the password would be sent unencrypted to ${url.hostname}`,
		);
	}
	if (url.protocol !== 'https:' && url.protocol !== 'http:') {
		throw new Error('The Base URL of the credential must start with https://');
	}
	if (url.search !== '' || url.hash !== '') {
		throw new Error('The Base URL of the credential must not contain a query (?) or fragment (#)');
	}
	return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
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

// Reading the credential decrypts it (and in n8n loads it from the database); one read per node
// run is enough. Keyed by the context object, which n8n creates per node run.
const accounts = new WeakMap<object, Promise<Account>>();

/**
 * n8n keeps one poll context for as long as a trigger is active: a read kept with it would hide an
 * edited credential (password, Base URL, customer, rate limit) until the workflow is activated again.
 */
function isPollContext(context: ServiceContext): boolean {
	return typeof (context as Partial<Pick<IPollFunctions, '__emit'>>).__emit === 'function';
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
		throttle: throttleFor(baseUrl, username, bucketTerms(credentials)),
	};
}

function getAccount(context: ServiceContext, itemIndex?: number): Promise<Account> {
	if (isPollContext(context)) return loadAccount(context, itemIndex);
	let account = accounts.get(context);
	if (!account) {
		account = loadAccount(context, itemIndex);
		accounts.set(context, account);
		// A failed read is not cached: the next call reports its own error with its own item.
		account.catch(() => accounts.delete(context));
	}
	return account;
}

/** The execution's cancel signal; a trigger's poll has none, nor has n8n before it had cancellation. */
export function cancelSignal(context: ServiceContext): AbortSignal | undefined {
	const candidate = context as Partial<Pick<IExecuteFunctions, 'getExecutionCancelSignal'>>;
	return typeof candidate.getExecutionCancelSignal === 'function'
		? candidate.getExecutionCancelSignal()
		: undefined;
}

/** What a node reports when its execution was cancelled: a notice, not a failure of the service. */
export function cancelledError(node: INode, itemIndex?: number): NodeOperationError {
	return new NodeOperationError(node, 'The execution was cancelled', { itemIndex, level: 'info' });
}

async function sleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) throw new ThrottleCancelledError();
	if (ms <= 0) return;
	await new Promise<void>((resolve, reject) => {
		const onAbort = () => {
			clearTimeout(timer);
			reject(new ThrottleCancelledError());
		};
		const timer = setTimeout(() => {
			signal?.removeEventListener('abort', onAbort);
			resolve();
		}, ms);
		signal?.addEventListener('abort', onAbort, { once: true });
	});
}

function isSingleUse(body: unknown): boolean {
	return (
		typeof body === 'object' &&
		body !== null &&
		!Buffer.isBuffer(body) &&
		typeof (body as { pipe?: unknown }).pipe === 'function'
	);
}

function normalizeHeaders(headers: unknown): Record<string, string> {
	const result: Record<string, string> = {};
	if (typeof headers !== 'object' || headers === null) return result;
	const plain =
		typeof (headers as { toJSON?: unknown }).toJSON === 'function'
			? (headers as { toJSON: () => object }).toJSON()
			: headers;
	for (const [name, value] of Object.entries(plain)) {
		if (value === undefined || value === null) continue;
		result[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
	}
	return result;
}

function bodyText(body: unknown): string {
	if (body === undefined || body === null) return '';
	if (typeof body === 'string') return body;
	if (Buffer.isBuffer(body)) return body.toString('utf8');
	return JSON.stringify(body);
}

function parseBody(text: string, responseType: Exchange['responseType']): unknown {
	if (responseType === 'none') return undefined;
	if (responseType === 'text') return text;
	if (text.trim() === '') return undefined;
	try {
		return JSON.parse(text);
	} catch {
		return text;
	}
}

/** The service's own words for an error: the `message` of its JSON body, or a short plain text. */
function serviceMessage(text: string): string | undefined {
	try {
		const parsed = JSON.parse(text) as unknown;
		if (typeof parsed === 'object' && parsed !== null) {
			const { message, Message } = parsed as { message?: unknown; Message?: unknown };
			const said = message ?? Message;
			if (typeof said === 'string' && said.trim() !== '') return said.trim();
		}
		if (typeof parsed === 'string' && parsed.trim() !== '') return parsed.trim();
		return undefined;
	} catch {
		const trimmed = text.trim();
		if (trimmed === '' || trimmed.length > 300 || trimmed.startsWith('<')) return undefined;
		return trimmed;
	}
}

/** Error code of a failed exchange (ECONNRESET, ERR_CANCELED, ...), whether wrapped by n8n or not. */
function errorCode(error: unknown): string | undefined {
	for (let current = error, depth = 0; current && depth < 4; depth++) {
		const code = (current as { code?: unknown }).code;
		if (typeof code === 'string' && code !== '') return code;
		current = (current as { cause?: unknown }).cause;
	}
	return undefined;
}

function errorMessage(error: unknown): string {
	for (let current = error, depth = 0; current && depth < 4; depth++) {
		const cause = (current as { cause?: unknown }).cause;
		if (!cause) return (current as Error).message ?? String(current);
		current = cause;
	}
	return String(error);
}

// Failures where the connection never carried the request: nothing reached the service.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
// Failures that will not go away by trying again within seconds.
const PERMANENT_CODES = new Set(['ENOTFOUND', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'ERR_TLS_CERT_ALTNAME_INVALID', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN']);

/**
 * Builds an error from plain values only: errors that n8n's request helpers throw carry the
 * request options (Authorization header included), so none of them is ever passed on.
 */
function apiError(
	node: INode,
	message: string,
	options: { description?: string; httpCode?: number; itemIndex?: number; code?: string },
): NodeApiError {
	// No `code` in the response object: n8n would swap the message for its generic text on codes
	// such as ECONNRESET, losing what matters here (whether the upload may have arrived).
	const response: JsonObject = { message };
	if (options.httpCode !== undefined) response.httpCode = String(options.httpCode);
	const description =
		options.code !== undefined
			? `${options.description ? `${options.description} ` : ''}(${options.code})`
			: options.description;
	return new NodeApiError(node, response, {
		message,
		description,
		httpCode: options.httpCode !== undefined ? String(options.httpCode) : undefined,
		itemIndex: options.itemIndex,
	});
}

function describeTarget(exchange: Exchange): string {
	const { pathname } = new URL(exchange.url);
	return `${exchange.method} ${pathname}`;
}

function statusError(
	node: INode,
	account: Account,
	exchange: Exchange,
	status: number,
	text: string,
	headers: Record<string, string>,
): NodeApiError {
	const said = serviceMessage(text);
	const target = describeTarget(exchange);
	const itemIndex = exchange.itemIndex;
	if (status === 401 || status === 403) {
		return apiError(node, said ?? `Authorization denied (${status})`, {
			httpCode: status,
			itemIndex,
			description: authDescription(account.credentials.environment),
		});
	}
	if (status === 400) {
		return apiError(node, said ?? 'The service rejected the request as invalid (400)', {
			httpCode: status,
			itemIndex,
			description: `The service answered 400 to ${target}`,
		});
	}
	if (status === 404) {
		return apiError(node, `Not found: ${target}`, {
			httpCode: status,
			itemIndex,
			description: said,
		});
	}
	if (status >= 300 && status < 400) {
		const location = headers.location;
		return apiError(node, `The service answered ${target} with a redirect (${status}), which is not followed`, {
			httpCode: status,
			itemIndex,
			description: location ? `Location: ${location}` : undefined,
		});
	}
	return apiError(node, said ?? `The service answered ${target} with status ${status}`, {
		httpCode: status,
		itemIndex,
		description: said ? `The service answered ${target} with status ${status}` : undefined,
	});
}

async function exchangeOnce(
	context: ServiceContext,
	account: Account,
	exchange: Exchange,
	body: RequestBody | undefined,
	signal: AbortSignal | undefined,
): Promise<IN8nHttpFullResponse> {
	const options: IHttpRequestOptions = {
		method: exchange.method,
		url: exchange.url,
		qs: exchange.qs,
		headers: { ...(exchange.headers ?? {}) },
		// Readable is not in n8n's declared body type, but its HTTP layer streams it as it is.
		body: body as IHttpRequestOptions['body'],
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		// Following a redirect would make the HTTP layer keep the whole body to send it again, and
		// the service's 301 (an upload's error document) is an answer in itself.
		disableFollowRedirect: true,
		maxRedirects: 0,
		encoding: 'text',
		json: false,
		abortSignal: signal,
	};
	if (body === undefined) delete options.body;
	if (!exchange.authenticated) {
		return (await context.helpers.httpRequest(options)) as IN8nHttpFullResponse;
	}
	// Handing n8n the credential already read spares it a read (and decryption) per request. The
	// credential's `authenticate` writes the customer headers after the request options are built,
	// so an override is applied to the credential data it reads, not to the headers.
	const data: ICredentialDataDecryptedObject = { ...account.credentials, ...exchange.customer };
	const helpers = context.helpers as IExecuteFunctions['helpers'];
	return (await helpers.httpRequestWithAuthentication.call(
		context as IExecuteFunctions,
		CREDENTIAL_NAME,
		options,
		{ credentialsDecrypted: { id: '', name: '', type: CREDENTIAL_NAME, data } },
	)) as IN8nHttpFullResponse;
}

async function perform<T>(
	context: ServiceContext,
	account: Account,
	exchange: Exchange,
): Promise<ServiceResponse<T>> {
	const node = context.getNode();
	const signal = cancelSignal(context);
	const method = exchange.method.toUpperCase();
	const idempotent = method === 'GET' || method === 'HEAD';
	const { itemIndex } = exchange;
	const throttle = exchange.authenticated ? account.throttle : undefined;
	const intervalMs = account.throttle.getTerms().intervalMs;
	const resendable = typeof exchange.body === 'function' || !isSingleUse(exchange.body);
	let rateLimited = 0;
	let failures = 0;

	for (;;) {
		let grant: ThrottleGrant | undefined;
		try {
			grant = await throttle?.acquire({ signal, logger: context.logger });
		} catch (error) {
			if (error instanceof ThrottleCancelledError) throw cancelledError(node, itemIndex);
			throw error;
		}
		const body = typeof exchange.body === 'function' ? exchange.body() : exchange.body;

		let response: IN8nHttpFullResponse;
		try {
			response = await exchangeOnce(context, account, exchange, body, signal);
		} catch (error) {
			grant?.settle();
			const code = errorCode(error);
			if (signal?.aborted || code === 'ERR_CANCELED') throw cancelledError(node, itemIndex);
			if (code === undefined && error instanceof NodeOperationError) throw error;
			const reason = errorMessage(error);
			const notSent = code !== undefined && NOT_SENT_CODES.has(code);
			const retryable =
				!(code !== undefined && PERMANENT_CODES.has(code)) &&
				(idempotent || (notSent && resendable)) &&
				failures + 1 < MAX_FAILURE_ATTEMPTS;
			if (retryable) {
				failures++;
				context.logger.debug('Retrying a request to the product-data integration service', {
					target: describeTarget(exchange),
					code,
					attempt: failures + 1,
				});
				await sleepOrCancel(backoffDelay(failures, FAILURE_BACKOFF_BASE_MS, MAX_BACKOFF_MS), signal, node, itemIndex);
				continue;
			}
			if (!idempotent && !notSent) {
				throw apiError(node, `The connection broke during ${describeTarget(exchange)}: the service may or may not have received it`, {
					itemIndex,
					code,
					description: `${AMBIGUOUS_DESCRIPTION} (${reason})`,
				});
			}
			throw apiError(node, `${describeTarget(exchange)} failed: ${reason}`, {
				itemIndex,
				code,
				description: notSent ? 'The request did not reach the service.' : undefined,
			});
		}

		const status = response.statusCode;
		const headers = normalizeHeaders(response.headers);
		const text = bodyText(response.body);
		const refused = status === 429 || status === 503;
		const retryAfterMs = refused ? parseRetryAfter(headers['retry-after']) : undefined;
		// The penalty first: a refused request was not counted, its timing must not move the schedule.
		if (refused) throttle?.penalize(retryAfterPenalty(retryAfterMs, intervalMs));
		grant?.settle();

		if (exchange.allowStatus.includes(status) || (status >= 200 && status < 300)) {
			return { statusCode: status, headers, body: parseBody(text, exchange.responseType) as T };
		}

		if (refused) {
			rateLimited++;
			context.logger.debug('The product-data integration service refused a request: bucket full', {
				target: describeTarget(exchange),
				status,
				retryAfterMs,
				attempt: rateLimited,
			});
			if (retryAfterMs !== undefined && retryAfterMs > MAX_RETRY_AFTER_MS) {
				throw apiError(node, `The service's request limit was reached and it asks to wait ${Math.round(retryAfterMs / 1000)} s`, {
					httpCode: status,
					itemIndex,
					description: 'Nothing was stored by the refused request; run it again later.',
				});
			}
			if (!resendable) {
				throw apiError(node, `The service's request limit was reached (${status}) and ${describeTarget(exchange)} cannot be repeated: its body is a stream that was already sent`, {
					httpCode: status,
					itemIndex,
					description: 'The service refused the request before processing it, so nothing was stored; running the node again is safe.',
				});
			}
			if (rateLimited >= MAX_RATE_LIMIT_ATTEMPTS) {
				throw apiError(node, `The service's request limit was hit: ${describeTarget(exchange)} was refused ${rateLimited} times (${status})`, {
					httpCode: status,
					itemIndex,
					description:
						'Nothing was stored by the refused requests. Another client may be using the same account, or the account has other limit terms than the credential says (Custom Rate Limit).',
				});
			}
			if (throttle === undefined) {
				await sleepOrCancel(retryAfterMs ?? backoffDelay(rateLimited, FAILURE_BACKOFF_BASE_MS, MAX_BACKOFF_MS), signal, node, itemIndex);
			} else if (rateLimited > 1) {
				// The penalty alone covers the usual case (another client filled the bucket once);
				// repeated refusals of the same request back off further.
				await sleepOrCancel(backoffDelay(rateLimited - 1, intervalMs, MAX_BACKOFF_MS), signal, node, itemIndex);
			}
			continue;
		}

		if (status >= 500) {
			if (idempotent && failures + 1 < MAX_FAILURE_ATTEMPTS) {
				failures++;
				await sleepOrCancel(backoffDelay(failures, FAILURE_BACKOFF_BASE_MS, MAX_BACKOFF_MS), signal, node, itemIndex);
				continue;
			}
			if (!idempotent) {
				throw apiError(node, `The service failed (${status}) on ${describeTarget(exchange)}: it may or may not have received it`, {
					httpCode: status,
					itemIndex,
					description: AMBIGUOUS_DESCRIPTION,
				});
			}
		}

		throw statusError(node, account, exchange, status, text, headers);
	}
}

/** Waits `ms`; a cancelled execution ends the wait at once, with the node's cancellation error. */
export async function sleepOrCancel(ms: number, signal: AbortSignal | undefined, node: INode, itemIndex?: number): Promise<void> {
	try {
		await sleep(ms, signal);
	} catch {
		throw cancelledError(node, itemIndex);
	}
}

/**
 * The one request function of the package: credential authentication, customer headers, the
 * account's rate limit, retries that cannot duplicate an upload, and errors that name the item.
 */
export async function serviceRequest<T = unknown>(
	this: ServiceContext,
	request: ServiceRequest,
): Promise<ServiceResponse<T>> {
	const account = await getAccount(this, request.itemIndex);
	const path = request.path.startsWith('/') ? request.path : `/${request.path}`;
	return await perform<T>(this, account, {
		method: request.method,
		url: `${account.baseUrl}${path}`,
		qs: request.qs,
		body: request.body,
		headers: request.headers,
		customer: request.customer,
		itemIndex: request.itemIndex,
		responseType: request.responseType ?? 'json',
		allowStatus: request.allowStatus ?? [],
		authenticated: true,
	});
}

/** The credential's data as the requests of this node run see it (no further read in a node run). */
export async function getServiceCredentials(
	this: ServiceContext,
	itemIndex?: number,
): Promise<ICredentialDataDecryptedObject> {
	return (await getAccount(this, itemIndex)).credentials;
}

/**
 * A URL the service handed out (e.g. a 301 Location), made absolute: a relative one is read
 * against the base URL, where the request went. One that cannot be read is handed back as it is.
 */
export async function resolveServiceUrl(this: ServiceContext, url: string, itemIndex?: number): Promise<string> {
	const { baseUrl } = await getAccount(this, itemIndex);
	try {
		return new URL(url, `${baseUrl}/`).href;
	} catch {
		return url;
	}
}

/**
 * Fetches a URL the service handed out (e.g. the error document behind a 301 Location; a relative
 * one is read against the base URL). Credentials go only to the base URL's origin; redirects are
 * never followed.
 */
export async function fetchServiceUrl(
	this: ServiceContext,
	url: string,
	itemIndex?: number,
): Promise<ServiceResponse<string>> {
	const account = await getAccount(this, itemIndex);
	let target: URL;
	try {
		target = new URL(url, `${account.baseUrl}/`);
	} catch {
		throw new NodeOperationError(this.getNode(), `The service handed out an invalid URL: ${url}`, { itemIndex });
	}
	if (target.protocol !== 'https:' && target.protocol !== 'http:') {
		throw new NodeOperationError(this.getNode(), `The service handed out a URL that is not http(s): ${url}`, { itemIndex });
	}
	return await perform<string>(this, account, {
		method: 'GET',
		url: target.href,
		itemIndex,
		responseType: 'text',
		allowStatus: [],
		authenticated: target.origin === account.origin,
	});
}
