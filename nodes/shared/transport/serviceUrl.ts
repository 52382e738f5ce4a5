import { NodeOperationError } from 'n8n-workflow';

import { getAccount } from './account';
import { perform } from './request';
import { LOOPBACK_HTTP } from './loopback';
import { cleanServiceText, DEFAULT_ANSWER_LIMIT_BYTES, describeBytes } from './responses';
import type { ServiceContext, ServiceResponse } from './types';

/**
 * A URL the service handed out (e.g. a 301 Location), made absolute: a relative one is read
 * against the base URL, where the request went. One that cannot be read is handed back as it is.
 */
export async function resolveServiceUrl(
	context: ServiceContext,
	url: string,
	itemIndex?: number,
): Promise<string> {
	const { baseUrl } = await getAccount(context, itemIndex);
	try {
		return new URL(url, `${baseUrl}/`).href;
	} catch {
		return url;
	}
}

/** Whether the Base URL is on this machine, where plain http is allowed for it (see LOOPBACK_HTTP). */
function onThisMachine(baseUrl: string): boolean {
	const url = new URL(baseUrl);
	url.protocol = 'http:';
	return LOOPBACK_HTTP.test(url.href);
}

/**
 * Fetches a URL the service handed out (e.g. the error document behind a 301 Location; a relative
 * one is read against the base URL), through the account's rate limit and its bounded retries. On
 * the service's own origin (the Base URL's) it is a request of the service, with the credential. On
 * another host (services keep error documents in blob storage or on a CDN) it goes without the
 * Authorization and customer headers, through n8n's plain request helper (whose SSRF protection
 * applies where the instance turns it on), over https only (plain http only where the Base URL
 * itself is on this machine). Redirects are never followed. Only the first 1 MiB is read; a longer
 * document ends with a note saying so.
 */
export async function fetchServiceUrl(
	context: ServiceContext,
	url: string,
	itemIndex?: number,
): Promise<ServiceResponse<string>> {
	const account = await getAccount(context, itemIndex);
	let target: URL;
	try {
		target = new URL(url, `${account.baseUrl}/`);
	} catch {
		throw new NodeOperationError(
			context.getNode(),
			`The service handed out an invalid URL: ${cleanServiceText(url)}`,
			{ itemIndex },
		);
	}
	const elsewhere = target.origin !== account.origin;
	if (
		elsewhere &&
		!(
			target.protocol === 'https:' ||
			(target.protocol === 'http:' && onThisMachine(account.baseUrl))
		)
	) {
		throw new NodeOperationError(
			context.getNode(),
			`The service handed out a URL on another host that is not https (${cleanServiceText(target.origin)}), which is not fetched`,
			{
				itemIndex,
				description: `A URL on another host than the Base URL's (${account.origin}) is fetched over https only, without the credential. The URL is in the output (errorUrl) for a workflow to follow if it trusts that host.`,
			},
		);
	}
	const response = await perform<string>(context, account, {
		method: 'GET',
		url: target.href,
		itemIndex,
		responseType: 'text',
		allowStatus: [],
		truncate: true,
		elsewhere,
	});
	if (!response.truncated) return response;
	const limit = describeBytes(DEFAULT_ANSWER_LIMIT_BYTES);
	return {
		...response,
		body: `${response.body}\n[truncated: longer than ${limit}, the rest was not read]`,
	};
}
