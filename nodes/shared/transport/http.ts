import type {
	ICredentialDataDecryptedObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';

import { CREDENTIAL_NAME, type Account } from './account';
import type { ServiceContext } from './context';
import type { Exchange, RequestBody } from './types';

/** Whether a body can be read only once (a stream, FormData): such a request cannot be repeated. */
export function isSingleUse(body: unknown): boolean {
	return (
		typeof body === 'object' &&
		body !== null &&
		!Buffer.isBuffer(body) &&
		typeof (body as { pipe?: unknown }).pipe === 'function'
	);
}

/** One exchange through n8n's HTTP layer: no retry, no limiter, HTTP errors handed back. */
export async function sendOnce(
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
