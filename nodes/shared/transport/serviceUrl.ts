import { NodeOperationError } from 'n8n-workflow';

import { getAccount } from './account';
import { type Allowance, RefusedUrlError } from './addresses';
import { allowanceOf } from './allowance';
import { type ElsewhereAnswer, requestElsewhere } from './elsewhere';
import { perform } from './request';
import {
	cleanServiceText,
	DEFAULT_ANSWER_LIMIT_BYTES,
	describeBytes,
	readAnswer,
	serviceMessage,
	type AnswerText,
} from './responses';
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

/**
 * Fetches a URL the service handed out (e.g. the error document behind a 301 Location; a relative
 * one is read against the base URL). On the service's own origin (the Base URL's) it is a request of
 * the service, with the credential, through the account's rate limit and its bounded retries. On
 * another host (services keep error documents in blob storage or on a CDN) it goes the package's one
 * way to other hosts (see requestElsewhere): over https only, without the credential or the
 * Authorization and customer headers, to public addresses only (and the hosts or networks the
 * node's Allowed Internal Hosts names, over plain http too when it names the host), redirects judged hop by hop; once,
 * outside the account's rate limit, which is the service's. Only the first 1 MiB is read; a longer
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
	const response =
		target.origin === account.origin
			? await perform<string>(context, account, {
					method: 'GET',
					url: target.href,
					itemIndex,
					responseType: 'text',
					allowStatus: [],
					truncate: true,
				})
			: await fetchOtherHost(
					context,
					target,
					{ timeoutMs: account.timeoutMs, allowance: allowanceOf(context, itemIndex) },
					itemIndex,
				);
	if (!response.truncated) return response;
	const limit = describeBytes(DEFAULT_ANSWER_LIMIT_BYTES);
	return {
		...response,
		body: `${response.body}\n[truncated: longer than ${limit}, the rest was not read]`,
	};
}

async function fetchOtherHost(
	context: ServiceContext,
	target: URL,
	{ timeoutMs, allowance }: { timeoutMs: number; allowance: Allowance },
	itemIndex: number | undefined,
): Promise<ServiceResponse<string>> {
	const host = cleanServiceText(target.host, 200);
	const signal = AbortSignal.timeout(timeoutMs);
	let answer: ElsewhereAnswer;
	let read: AnswerText;
	try {
		answer = await requestElsewhere(context, {
			url: target.href,
			headers: {},
			signal,
			allowance,
			plainHttp: false,
		});
		read = await readAnswer(answer.body, DEFAULT_ANSWER_LIMIT_BYTES);
	} catch (error) {
		const refused = error instanceof RefusedUrlError;
		throw new NodeOperationError(
			context.getNode(),
			refused
				? `The service handed out an error document on ${host}, which is not fetched: ${error.message}`
				: `The error document on ${host} could not be fetched`,
			{
				itemIndex,
				description: refused
					? `A URL on another host than the Base URL's is fetched over https, without the credential, and only from the public internet or a host named in Allowed Internal Hosts. The URL is in the output (errorUrl) for a workflow to follow if it trusts that host.`
					: signal.aborted
						? `No answer within ${Math.round(timeoutMs / 1000)} s (Request Timeout).`
						: cleanServiceText((error as Error).message ?? String(error)),
			},
		);
	}
	if (answer.statusCode < 200 || answer.statusCode > 299)
		throw new NodeOperationError(
			context.getNode(),
			`GET ${target.pathname} on ${host} answered with status ${answer.statusCode}`,
			{ itemIndex, description: serviceMessage(read.text) },
		);
	return {
		statusCode: answer.statusCode,
		headers: answer.headers,
		body: read.text,
		truncated: read.truncated,
	};
}
