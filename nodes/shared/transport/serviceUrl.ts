import { NodeOperationError } from 'n8n-workflow';

import { getAccount } from './account';
import { perform } from './request';
import { DEFAULT_ANSWER_LIMIT_BYTES, describeBytes } from './responses';
import type { ServiceContext, ServiceResponse } from './types';

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
 * one is read against the base URL), as any request of the service: with the credential, through
 * the account's rate limit and its bounded retries. Only the service's own origin (the Base URL's)
 * is fetched: an answer of the service cannot make the node send requests anywhere else, and a
 * workflow that wants a document elsewhere has its URL. Redirects are never followed. Only the
 * first 1 MiB is read; a longer document ends with a note saying so.
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
	if (target.origin !== account.origin) {
		throw new NodeOperationError(this.getNode(), `The service handed out a URL on another host (${target.origin}), which is not fetched`, {
			itemIndex,
			description: `Only URLs on the Base URL's own origin (${account.origin}) are fetched. The URL is in the output (errorUrl) for a workflow to follow if it trusts that host.`,
		});
	}
	const response = await perform<string>(this, account, {
		method: 'GET',
		url: target.href,
		itemIndex,
		responseType: 'text',
		allowStatus: [],
		truncate: true,
	});
	if (!response.truncated) return response;
	const limit = describeBytes(DEFAULT_ANSWER_LIMIT_BYTES);
	return { ...response, body: `${response.body}\n[truncated: longer than ${limit}, the rest was not read]` };
}
