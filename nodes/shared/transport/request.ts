import { NodeApiError, type ILoadOptionsFunctions } from 'n8n-workflow';

import { MAX_LIMIT_WAIT_MS, parseRetryAfter, retryAfterPenalty } from '../throttle';
import { effectiveCustomer, getAccount, type Account } from './account';
import {
	acquire,
	afterNoAnswer,
	afterRefusal,
	afterServerError,
	readBody,
	type Attempt,
} from './attempt';
import { cancelSignal, withListDeadline } from './cancel';
import { statusError, type Unauthorized } from './errors';
import { isSingleUse, sendOnce } from './http';
import { isRefusal } from './responses';
import { oncePerNodeRun } from './runCache';
import type { Exchange, ServiceContext, ServiceRequest, ServiceResponse } from './types';
import { checkCustomer, checkHeaders, checkPath } from './validate';

/**
 * One request to the service's origin, with the credential, through the account's limiter, tried as
 * often as is safe: the way of serviceRequest and of a URL the service names on its origin
 * (serviceUrl.ts).
 */
export async function perform<T>(
	context: ServiceContext,
	account: Account,
	exchange: Exchange,
): Promise<ServiceResponse<T>> {
	const method = exchange.method.toUpperCase();
	const attempt: Attempt = {
		context,
		node: context.getNode(),
		account,
		exchange,
		signal: cancelSignal(context),
		limiter: account.limiter,
		idempotent: method === 'GET' || method === 'HEAD',
		resendable: typeof exchange.body === 'function' || !isSingleUse(exchange.body),
		rateLimited: 0,
		firstRefusalAt: 0,
		failures: 0,
	};
	const intervalMs = account.limiter.getTerms().intervalMs;

	for (;;) {
		const grant = await acquire(attempt);
		const body = typeof exchange.body === 'function' ? await exchange.body() : exchange.body;

		const result = await sendOnce(context, account, exchange, body, attempt.signal);
		if ('failure' in result) {
			await grant.settle();
			await afterNoAnswer(attempt, result.failure);
			continue;
		}

		const { statusCode: status, headers, text, truncated } = result.answer;
		account.answered(status);
		const retryAfterMs = parseRetryAfter(headers['retry-after']);
		const refused = isRefusal(status, retryAfterMs);
		// The penalty first: a refused request was not counted, its timing must not move the schedule.
		// A Retry-After longer than an execution waits fails its own request (below) and holds the
		// account back only as a refusal without one does: a penalty of 15 minutes would make each of
		// the account's other requests wait that long or fail at once, whatever the service says to them.
		if (refused) {
			const waitable =
				retryAfterMs !== undefined && retryAfterMs <= MAX_LIMIT_WAIT_MS ? retryAfterMs : undefined;
			await attempt.limiter.penalize(retryAfterPenalty(waitable, intervalMs));
		}
		await grant.settle();

		if (exchange.allowStatus.includes(status) || (status >= 200 && status < 300)) {
			return {
				statusCode: status,
				headers,
				body: readBody<T>(attempt, status, text, truncated),
				truncated,
			};
		}
		if (refused) {
			await afterRefusal(attempt, status, retryAfterMs);
		} else if (status >= 500) {
			await afterServerError(attempt, status, text, headers);
		} else {
			const unauthorized =
				status === 401 || status === 403
					? await diagnoseUnauthorized(context, account, exchange)
					: undefined;
			throw statusError(
				attempt.node,
				account.credentials.environment,
				exchange,
				status,
				text,
				headers,
				unauthorized,
			);
		}
	}
}

/**
 * After a 401 or 403, whether the credential's own login works: one GET /api/auth/me with its own
 * customer, sent only then, tells a refused login from a refused customer node.
 */
async function diagnoseUnauthorized(
	context: ServiceContext,
	account: Account,
	exchange: Exchange,
): Promise<Unauthorized | undefined> {
	const unauthorized = {
		customer: effectiveCustomer(account.credentials, exchange.customer),
		overridden: exchange.customer !== undefined,
	};
	const check = `${account.baseUrl}/api/auth/me`;
	// The refused request was that very check.
	if (exchange.url === check && !exchange.customer) return { ...unauthorized, cause: 'login' };
	// Asked once per node run, however many items are refused (once per poll in a trigger, whose
	// credential may have been mended since).
	const answer = await oncePerNodeRun(
		context,
		'login-check',
		async () =>
			await perform(context, account, {
				method: 'GET',
				url: check,
				itemIndex: exchange.itemIndex,
				responseType: 'none',
				allowStatus: [],
			}).then(
				() => 'customer' as const,
				(error: unknown) =>
					error instanceof NodeApiError && (error.httpCode === '401' || error.httpCode === '403')
						? ('login' as const)
						: undefined,
			),
	);
	return { ...unauthorized, cause: answer };
}

/**
 * The one request function of the package: credential authentication, customer headers, the
 * account's rate limit, retries that cannot duplicate an upload, and errors that name the item.
 */
export async function serviceRequest<T = unknown>(
	context: ServiceContext,
	request: ServiceRequest,
): Promise<ServiceResponse<T>> {
	const account = await getAccount(context, request.itemIndex);
	const node = context.getNode();
	checkPath(node, request.path, request.itemIndex);
	checkHeaders(node, request.headers, request.itemIndex);
	checkCustomer(node, request.customer, account.credentials, request.itemIndex);
	const { path, responseType, allowStatus, ...rest } = request;
	return await perform<T>(context, account, {
		...rest,
		url: `${account.baseUrl}${path.startsWith('/') ? path : `/${path}`}`,
		responseType: responseType ?? 'json',
		allowStatus: allowStatus ?? [],
	});
}

/**
 * The request of a list in the editor (`what`, e.g. "customer nodes"), as serviceRequest but within
 * the credential's Request Timeout, waits for the request limit included: the editor has no cancel
 * button, and a busy account must not keep it waiting longer than one request may take.
 */
export async function listRequest<T = unknown>(
	context: ILoadOptionsFunctions,
	what: string,
	request: ServiceRequest,
): Promise<ServiceResponse<T>> {
	const { timeoutMs } = await getAccount(context, request.itemIndex);
	return await withListDeadline(
		context,
		what,
		timeoutMs,
		async () => await serviceRequest<T>(context, request),
	);
}
