import { NodeOperationError, type INode } from 'n8n-workflow';

import {
	backoffDelay,
	describeWait,
	LimiterCancelledError,
	MAX_LIMIT_WAIT_MS,
	type LimiterGrant,
	type RateLimiter,
} from '../throttle';
import { edition } from '../ports';
import type { Account } from './account';
import { cancelledError, sleepOrCancel } from './cancel';
import {
	ambiguousDescription,
	apiError,
	CERTIFICATE_CODES,
	describeTarget,
	errorCode,
	errorMessage,
	NOT_SENT_CODES,
	PERMANENT_CODES,
	statusError,
} from './errors';
import { ExchangeTimeoutError } from './http';
import { DEFAULT_ANSWER_LIMIT_BYTES, describeBytes, parseBody } from './responses';
import { hintOncePerRun } from './runCache';
import type { Exchange, ServiceContext } from './types';

/*
 * What one request does between its attempts (see perform in ./request.ts): when it waits and is
 * sent again, when it gives up, and with which error.
 */

/**
 * Attempts of one request that the service refuses with 429/503 before giving up, if by then the
 * account's full bucket has had time to drain twice since the first refusal (see afterRefusal).
 */
const MAX_RATE_LIMIT_ATTEMPTS = 6;
/** Attempts of one GET/HEAD that fails with a 5xx or a broken connection before giving up. */
const MAX_FAILURE_ATTEMPTS = 3;
const FAILURE_BACKOFF_BASE_MS = 500;
/** The least a refused request waits before it is sent again: one leak interval, at most 1 s. */
const REFUSAL_FLOOR_MS = 1000;
const MAX_BACKOFF_MS = 60_000;

/** One request's way through its attempts: what it is, where it goes, what went wrong so far. */
export interface Attempt {
	context: ServiceContext;
	node: INode;
	account: Account;
	exchange: Exchange;
	signal: AbortSignal | undefined;
	limiter: RateLimiter;
	idempotent: boolean;
	resendable: boolean;
	rateLimited: number;
	/** When the service first refused this request. */
	firstRefusalAt: number;
	failures: number;
}

export async function acquire(attempt: Attempt): Promise<LimiterGrant> {
	const { context } = attempt;
	try {
		return await attempt.limiter.acquire({
			signal: attempt.signal,
			logger: context.logger,
			notice: (message) => hintOncePerRun(context, message),
		});
	} catch (error) {
		if (error instanceof LimiterCancelledError) {
			throw cancelledError(attempt.node, attempt.exchange.itemIndex, attempt.signal?.reason);
		}
		throw new NodeOperationError(attempt.node, error as Error, {
			itemIndex: attempt.exchange.itemIndex,
		});
	}
}

async function backOff(attempt: Attempt, ms: number): Promise<void> {
	await sleepOrCancel(ms, attempt.signal, attempt.node, attempt.exchange.itemIndex);
}

/**
 * A failed exchange (no answer): waits and returns when it is safe to try again, otherwise throws
 * the error that says whether the request may have reached the service.
 */
export async function afterNoAnswer(attempt: Attempt, error: unknown): Promise<void> {
	const { node, exchange, signal } = attempt;
	const { itemIndex } = exchange;
	const code = errorCode(error);
	if (signal?.aborted || code === 'ERR_CANCELED')
		throw cancelledError(node, itemIndex, signal?.reason);
	if (code === undefined && error instanceof NodeOperationError) throw error;
	const reason = errorMessage(error);
	const notSent = code !== undefined && NOT_SENT_CODES.has(code);
	const retryable =
		!(code !== undefined && PERMANENT_CODES.has(code)) &&
		(attempt.idempotent || (notSent && attempt.resendable)) &&
		attempt.failures + 1 < MAX_FAILURE_ATTEMPTS;
	if (retryable) {
		attempt.failures++;
		attempt.context.logger.debug('Retrying a request to the product-data integration service', {
			target: describeTarget(exchange),
			code,
			attempt: attempt.failures + 1,
		});
		await backOff(attempt, backoffDelay(attempt.failures, FAILURE_BACKOFF_BASE_MS, MAX_BACKOFF_MS));
		return;
	}
	// The handshake failed before the request was sent: an upload too did not arrive.
	if (code !== undefined && CERTIFICATE_CODES.has(code))
		throw certificateError(attempt, reason, code);
	if (!attempt.idempotent && !notSent) {
		const what =
			error instanceof ExchangeTimeoutError
				? `No answer to ${describeTarget(exchange)} within ${Math.round(error.timeoutMs / 1000)} s (the credential's Request Timeout)`
				: `The connection broke during ${describeTarget(exchange)}`;
		throw apiError(node, `${what}: the service may or may not have received it`, {
			itemIndex,
			code,
			description: `${ambiguousDescription(exchange)} (${reason})`,
			ambiguous: true,
		});
	}
	// Sent through a proxy, a request that never left reached no further than the proxy.
	const proxy = notSent ? edition().proxyOf?.(new URL(exchange.url)) : undefined;
	throw apiError(
		node,
		`${describeTarget(exchange)} failed: ${proxy ? `the proxy ${proxy} could not be reached` : describeFailure(error, reason, notSent)}`,
		{
			itemIndex,
			code,
			description: notSent ? `The request did not reach the service: ${reason}` : reason,
		},
	);
}

/** The service's TLS certificate was refused: said so, with the way to trust a company's own authority. */
function certificateError(attempt: Attempt, reason: string, code: string): Error {
	return apiError(
		attempt.node,
		`${describeTarget(attempt.exchange)} failed: the service's TLS certificate was not accepted (${reason})`,
		{
			itemIndex: attempt.exchange.itemIndex,
			code,
			description:
				"The request did not reach the service. Where the Base URL's certificate is signed by a company's own certificate authority, start n8n with NODE_EXTRA_CA_CERTS naming that authority's certificate (a PEM file).",
		},
	);
}

/**
 * What became of an exchange without an answer, in words for a message: n8n replaces a message
 * that names a network error code (ECONNRESET, ...) with its generic text, losing the request.
 */
function describeFailure(error: unknown, reason: string, notSent: boolean): string {
	if (error instanceof ExchangeTimeoutError) return reason;
	if (notSent) return 'the service could not be reached';
	const code = errorCode(error);
	return code !== undefined && reason.toUpperCase().includes(code)
		? 'the connection broke'
		: reason;
}

/** What a refusal says: a 429 is the account's request limit, a 503 with Retry-After the service itself. */
function refusalReason(status: number): string {
	return status === 429 ? "The service's request limit was reached" : 'The service was unavailable';
}

/**
 * The error that ends a refused request (see afterRefusal), or none while it may be sent again:
 * its Retry-After outlasts what an execution waits, its body cannot be sent twice, or it has been
 * refused too often for too long.
 */
function finalRefusal(
	attempt: Attempt,
	status: number,
	retryAfterMs: number | undefined,
): Error | undefined {
	const { node, exchange } = attempt;
	const { itemIndex } = exchange;
	const target = describeTarget(exchange);
	// The longest wait holds for all refusals of the request together: six Retry-After of 15 minutes
	// each would otherwise hold it up for an hour and a half.
	const refusedForMs = Date.now() - attempt.firstRefusalAt;
	if (retryAfterMs !== undefined && refusedForMs + retryAfterMs > MAX_LIMIT_WAIT_MS) {
		const already =
			refusedForMs > 0
				? ` This request has been refused for ${describeWait(refusedForMs)} already.`
				: '';
		return apiError(
			node,
			`${refusalReason(status)} and it asks to wait ${describeWait(retryAfterMs)} before ${target} is sent again`,
			{
				httpCode: status,
				itemIndex,
				description: `An execution waits at most ${describeWait(MAX_LIMIT_WAIT_MS)} for the service.${already} Nothing was stored by the refused request; run it again later.`,
			},
		);
	}
	if (!attempt.resendable) {
		return apiError(
			node,
			`${refusalReason(status)} (${status}) and ${target} cannot be repeated: its body is a stream that was already sent`,
			{
				httpCode: status,
				itemIndex,
				description:
					'The service refused the request before processing it, so nothing was stored; running the node again is safe.',
			},
		);
	}
	// Other processes on the account (without a shared store) learn of each other from refusals
	// only: a request is kept alive, slower, until the bucket has had time to drain twice, but no
	// longer than an execution waits for the request limit (a large custom bucket drains for hours).
	const { capacity, intervalMs } = attempt.limiter.getTerms();
	const drainMs = capacity * intervalMs;
	const keepTryingMs = Math.min(2 * drainMs, MAX_LIMIT_WAIT_MS);
	if (
		attempt.rateLimited >= MAX_RATE_LIMIT_ATTEMPTS &&
		Date.now() - attempt.firstRefusalAt >= keepTryingMs
	) {
		return apiError(
			node,
			`${refusalReason(status)}: ${target} was refused ${attempt.rateLimited} times (${status})`,
			{
				httpCode: status,
				itemIndex,
				description:
					status === 429
						? 'Nothing was stored by the refused requests. Another client may be using the same account, or the account has other limit terms than the credential says (Custom Rate Limit).'
						: 'Nothing was stored by the refused requests: the service asked to come back later each time. Run the node again later.',
			},
		);
	}
	return undefined;
}

/**
 * A refusal that asks to come back (see isRefusal): nothing was handled, so the request waits and
 * returns when it may be sent again (an upload too), within the bounds of the rate limit; otherwise throws.
 */
export async function afterRefusal(
	attempt: Attempt,
	status: number,
	retryAfterMs: number | undefined,
): Promise<void> {
	attempt.rateLimited++;
	attempt.context.logger.debug(
		'The product-data integration service refused a request: bucket full or unavailable',
		{
			target: describeTarget(attempt.exchange),
			status,
			retryAfterMs,
			attempt: attempt.rateLimited,
		},
	);
	if (attempt.rateLimited === 1) attempt.firstRefusalAt = Date.now();
	const final = finalRefusal(attempt, status, retryAfterMs);
	if (final) throw final;
	const { capacity, intervalMs } = attempt.limiter.getTerms();
	const drainMs = capacity * intervalMs;
	// The penalty alone covers the usual case (another client filled the bucket once); repeated
	// refusals of the same request back off further. Whatever Retry-After says (0 included), a
	// refused request is not sent again sooner than the floor.
	const floorMs = Math.min(intervalMs, REFUSAL_FLOOR_MS);
	const backoffMs =
		attempt.rateLimited > 1
			? backoffDelay(attempt.rateLimited - 1, intervalMs, Math.min(MAX_BACKOFF_MS, drainMs))
			: 0;
	await backOff(attempt, Math.max(floorMs, backoffMs));
}

/** A 5xx that is not the rate limit: a GET/HEAD is tried again (returns); anything else throws. */
export async function afterServerError(
	attempt: Attempt,
	status: number,
	text: string,
	headers: Record<string, string>,
): Promise<void> {
	const { node, exchange } = attempt;
	if (attempt.idempotent && attempt.failures + 1 < MAX_FAILURE_ATTEMPTS) {
		attempt.failures++;
		await backOff(attempt, backoffDelay(attempt.failures, FAILURE_BACKOFF_BASE_MS, MAX_BACKOFF_MS));
		return;
	}
	if (!attempt.idempotent) {
		const what =
			status === 503
				? `The service was unavailable (503) for ${describeTarget(exchange)}`
				: `The service failed (${status}) on ${describeTarget(exchange)}`;
		throw apiError(node, `${what}: it may or may not have received it`, {
			httpCode: status,
			itemIndex: exchange.itemIndex,
			description: ambiguousDescription(exchange),
			ambiguous: true,
		});
	}
	throw statusError(node, attempt.account.credentials.environment, exchange, status, text, headers);
}

/**
 * An answer the request cannot use: longer than its limit, or JSON nested too deep. For an upload
 * the service accepted, the session may exist: the error says it may have arrived, as any upload
 * whose answer could not be read.
 */
function unreadableAnswerError(attempt: Attempt, status: number, what: string, why: string): Error {
	const { node, exchange } = attempt;
	return apiError(node, `The service answered ${describeTarget(exchange)} with ${what}`, {
		httpCode: status,
		itemIndex: exchange.itemIndex,
		description: attempt.idempotent
			? `${why}: an answer like that is not one the service gives.`
			: `${ambiguousDescription(exchange)} The service may or may not have stored it.`,
		ambiguous: !attempt.idempotent,
	});
}

/** The answer's body as the request asked for it, or the error of an answer it cannot use. */
export function readBody<T>(attempt: Attempt, status: number, text: string, truncated: boolean): T {
	const { exchange } = attempt;
	if (truncated && !exchange.truncate) {
		const limit = describeBytes(exchange.maxAnswerBytes ?? DEFAULT_ANSWER_LIMIT_BYTES);
		throw unreadableAnswerError(
			attempt,
			status,
			`more than ${limit}, more than this request reads`,
			`Only the first ${limit} were read and the rest was not`,
		);
	}
	try {
		return parseBody(text, exchange.responseType) as T;
	} catch (error) {
		// JSON nested too deep, the one error of parseBody.
		throw unreadableAnswerError(
			attempt,
			status,
			`${(error as Error).message}, deeper than this request reads`,
			'It was not read',
		);
	}
}
