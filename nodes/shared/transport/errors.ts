import { NodeApiError, type INode, type JsonObject } from 'n8n-workflow';

import { serviceMessage } from './responses';
import type { CustomerOverride, Exchange } from './types';

/**
 * What a 401 or 403 tells, once the credential's own login was tried (GET /api/auth/me with its own
 * customer): `login` when that failed too, `customer` when it worked, so the customer node of the
 * refused request is what the service refused.
 */
export interface Unauthorized {
	cause?: 'login' | 'customer';
	customer: CustomerOverride;
	/** The customer came from the node's Customer option, not from the credential. */
	overridden: boolean;
}

/** The credential's Environment is what a refused login most often gets wrong: a password of the other one. */
function authDescription(environment: unknown, unauthorized?: Unauthorized): string {
	const name = environment === 'test' ? 'Development/Test' : 'Production';
	const login = `that the username and password are the ones issued for the ${name} environment (the credential's Environment) and that the Base URL is that environment's address`;
	if (unauthorized?.cause === 'customer') {
		const { customerIdType, customerId } = unauthorized.customer;
		const where = unauthorized.overridden
			? "the node's Customer option"
			: "the credential's Customer ID and Customer ID Type";
		return `The login works (the credential's own customer is accepted), so the service refused the customer node ${customerIdType} ${customerId}: check ${where}. A service ID is the number the service gave the node; your own ID of it is an external ID.`;
	}
	if (unauthorized?.cause === 'login') {
		return `The credential's login is refused as well (GET /api/auth/me with its own customer): check ${login}, and the credential's Customer ID and its type (ServiceID or ExternalID)`;
	}
	return `Check ${login}, and the customer ID and its type (ServiceID or ExternalID)`;
}

/** What to do about an upload that may or may not have reached the service: documents and images differ. */
export function ambiguousDescription(exchange: Pick<Exchange, 'url'>): string {
	if (new URL(exchange.url).pathname.startsWith('/api/images')) {
		return 'It was not sent again automatically. An image the service already has keeps its hashcode: Skip Existing looks each image up by its md5 before uploading it, so a second run (or Retry On Fail) with Skip Existing on sends only what did not arrive.';
	}
	return "It was not sent again automatically, because a second upload could duplicate the first. With Retry On Fail, the next try looks for it in the list of the day's uploads and sends it again only if it is not there; otherwise list the uploads of today before sending it again.";
}

/** Error code of a failed exchange (ECONNRESET, ERR_CANCELED, ...), whether wrapped by n8n or not. */
export function errorCode(error: unknown): string | undefined {
	for (let current = error, depth = 0; current && depth < 4; depth++) {
		const code = (current as { code?: unknown }).code;
		if (typeof code === 'string' && code !== '') return code;
		current = (current as { cause?: unknown }).cause;
	}
	return undefined;
}

/** The innermost message of a failed exchange: the network's own words, not n8n's wrapping. */
export function errorMessage(error: unknown): string {
	for (let current = error, depth = 0; current && depth < 4; depth++) {
		const cause = (current as { cause?: unknown }).cause;
		if (!cause) return (current as Error).message ?? String(current);
		current = cause;
	}
	return String(error);
}

/** Failures where the connection never carried the request: nothing reached the service. */
export const NOT_SENT_CODES = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
]);
/**
 * A certificate the TLS handshake refused (OpenSSL's verification codes, Node's name check): the
 * request was never sent, and will not be until the certificate or the authorities n8n trusts change.
 */
export const CERTIFICATE_CODES = new Set([
	'CERT_HAS_EXPIRED',
	'CERT_NOT_YET_VALID',
	'CERT_UNTRUSTED',
	'DEPTH_ZERO_SELF_SIGNED_CERT',
	'ERR_TLS_CERT_ALTNAME_INVALID',
	'SELF_SIGNED_CERT_IN_CHAIN',
	'UNABLE_TO_GET_ISSUER_CERT',
	'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
	'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/** Failures that will not go away by trying again within seconds. */
export const PERMANENT_CODES = new Set(['ENOTFOUND', ...CERTIFICATE_CODES]);

/**
 * The failure of a request that may or may not have been handled all the same (an upload whose
 * answer was lost, a 500): it is never sent again blindly.
 */
export class AmbiguousUploadError extends NodeApiError {
	constructor(...args: ConstructorParameters<typeof NodeApiError>) {
		super(...args);
		// n8n tells its node errors apart by name (it rethrows and reports a NodeApiError as one).
		this.name = 'NodeApiError';
	}
}

/**
 * A 401 or 403 after which the credential's own login (GET /api/auth/me) was refused too: no request with
 * this credential will be answered, whichever session or customer node it asks about.
 */
export class RefusedLoginError extends NodeApiError {
	constructor(...args: ConstructorParameters<typeof NodeApiError>) {
		super(...args);
		this.name = 'NodeApiError';
	}
}

/**
 * Builds an error from plain values only: errors that n8n's request helpers throw carry the
 * request options (Authorization header included), so none of them is ever passed on.
 */
export function apiError(
	node: INode,
	message: string,
	options: {
		description?: string;
		httpCode?: number;
		itemIndex?: number;
		code?: string;
		ambiguous?: boolean;
		refusedLogin?: boolean;
	},
): NodeApiError {
	// No `code` in the response object: n8n would swap the message for its generic text on codes
	// such as ECONNRESET, losing what matters here (whether the upload may have arrived).
	const response: JsonObject = { message };
	if (options.httpCode !== undefined) response.httpCode = String(options.httpCode);
	const description =
		options.code !== undefined
			? `${options.description ? `${options.description} ` : ''}(${options.code})`
			: options.description;
	const ErrorClass =
		options.ambiguous === true
			? AmbiguousUploadError
			: options.refusedLogin === true
				? RefusedLoginError
				: NodeApiError;
	return new ErrorClass(node, response, {
		message,
		description,
		httpCode: options.httpCode !== undefined ? String(options.httpCode) : undefined,
		itemIndex: options.itemIndex,
	});
}

/** "METHOD /path" of an exchange, for messages: never the query, which may carry item data. */
export function describeTarget(exchange: Exchange): string {
	const { pathname } = new URL(exchange.url);
	return `${exchange.method} ${pathname}`;
}

/** The error of an answer that is neither a success nor handled by a retry. */
export function statusError(
	node: INode,
	environment: unknown,
	exchange: Exchange,
	status: number,
	text: string,
	headers: Record<string, string>,
	unauthorized?: Unauthorized,
): NodeApiError {
	const said = serviceMessage(text);
	const target = describeTarget(exchange);
	const itemIndex = exchange.itemIndex;
	if (status === 401 || status === 403) {
		return apiError(node, said ?? `Authorization denied (${status})`, {
			httpCode: status,
			itemIndex,
			description: authDescription(environment, unauthorized),
			refusedLogin: unauthorized?.cause === 'login',
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
		return apiError(
			node,
			`The service answered ${target} with a redirect (${status}), which is not followed`,
			{
				httpCode: status,
				itemIndex,
				description: location ? `Location: ${location}` : undefined,
			},
		);
	}
	return apiError(node, said ?? `The service answered ${target} with status ${status}`, {
		httpCode: status,
		itemIndex,
		description: said ? `The service answered ${target} with status ${status}` : undefined,
	});
}
