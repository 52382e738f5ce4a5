import type {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';

import type { Account } from './account';
import { edition } from '../ports';
import { errorCode, errorMessage } from './errors';
import {
	DEFAULT_ANSWER_LIMIT_BYTES,
	normalizeHeaders,
	readAnswer,
	STREAMED_ANSWER,
	type AnswerText,
} from './responses';
import type { Exchange, RequestBody, ServiceContext } from './types';

/** Whether a body can be read only once (a stream, FormData): such a request cannot be repeated. */
export function isSingleUse(body: unknown): boolean {
	return (
		typeof body === 'object' &&
		body !== null &&
		!Buffer.isBuffer(body) &&
		typeof (body as { pipe?: unknown }).pipe === 'function'
	);
}

/** An answer read within its limit. */
export interface Answer extends AnswerText {
	statusCode: number;
	headers: Record<string, string>;
}

/** An answer, or why there is none (what n8n's HTTP layer threw: never shown as it is). */
export type ExchangeResult = { answer: Answer } | { failure: unknown };

/** The failure of an exchange that outlived the credential's Request Timeout. */
export class ExchangeTimeoutError extends Error {
	readonly code = 'ETIMEDOUT';

	constructor(readonly timeoutMs: number) {
		super(`no answer within ${Math.round(timeoutMs / 1000)} s`);
		this.name = 'ExchangeTimeoutError';
	}
}

/**
 * One exchange through n8n's HTTP layer: no retry, no limiter, HTTP errors handed back. It has a
 * deadline: a request whose body is in memory must be answered within the Request Timeout; one
 * whose body is a stream (a large upload may take longer than that to send) must not stay silent
 * for longer than the Request Timeout (the socket's idle deadline), which also bounds a connection
 * that never completes.
 */
export async function sendOnce(
	context: ServiceContext,
	account: Account,
	exchange: Exchange,
	body: RequestBody | undefined,
	cancel: AbortSignal | undefined,
): Promise<ExchangeResult> {
	const deadline = isSingleUse(body) ? undefined : AbortSignal.timeout(account.timeoutMs);
	const signals = [cancel, deadline].filter(
		(signal): signal is AbortSignal => signal !== undefined,
	);
	try {
		const response = await exchangeWith(
			context,
			account,
			exchange,
			body,
			signals.length ? AbortSignal.any(signals) : undefined,
		);
		// The answer's body has the same deadline as its headers; a streamed upload's, one more
		// Request Timeout.
		const bodyDeadline = deadline ?? AbortSignal.timeout(account.timeoutMs);
		const stopReading = () =>
			(response.body as { destroy?: (error: Error) => void }).destroy?.(
				new ExchangeTimeoutError(account.timeoutMs),
			);
		bodyDeadline.addEventListener('abort', stopReading, { once: true });
		try {
			const text = await readAnswer(
				response.body,
				exchange.maxAnswerBytes ?? DEFAULT_ANSWER_LIMIT_BYTES,
			);
			return {
				answer: {
					statusCode: response.statusCode,
					headers: normalizeHeaders(response.headers),
					...text,
				},
			};
		} finally {
			bodyDeadline.removeEventListener('abort', stopReading);
		}
	} catch (error) {
		const timedOut = !cancel?.aborted && (deadline?.aborted === true || isIdleTimeout(error));
		return { failure: timedOut ? new ExchangeTimeoutError(account.timeoutMs) : error };
	}
}

/**
 * The HTTP layer's own timeout (axios: ECONNABORTED with "timeout" in its message, or ETIMEDOUT),
 * however n8n wrapped it: a streamed upload has no deadline of its own, only this one.
 */
function isIdleTimeout(error: unknown): boolean {
	const code = errorCode(error);
	return code === 'ETIMEDOUT' || (code === 'ECONNABORTED' && /timeout/i.test(errorMessage(error)));
}

async function exchangeWith(
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
		// The service's 301 (an upload's error document) is an answer in itself.
		...STREAMED_ANSWER,
		timeout: account.timeoutMs,
		abortSignal: signal,
	};
	if (body === undefined) delete options.body;
	// Handing n8n the credential already read spares it a read (and decryption) per request. The
	// credential's `authenticate` writes the customer headers after the request options are built,
	// so an override is applied to the credential data it reads, not to the headers.
	const data: ICredentialDataDecryptedObject = { ...account.credentials, ...exchange.customer };
	const helpers = context.helpers as IExecuteFunctions['helpers'];
	const { credentialType } = edition();
	return (await helpers.httpRequestWithAuthentication.call(
		context as IExecuteFunctions,
		credentialType,
		options,
		{ credentialsDecrypted: { id: '', name: '', type: credentialType, data } },
	)) as IN8nHttpFullResponse;
}
