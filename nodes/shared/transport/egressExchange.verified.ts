/*
 * One GET to a host that is not the service, in the verified edition (built in place of
 * ./egressExchange.ts): n8n Cloud's rules allow no Node client of its own, so the request goes
 * through n8n's request helper. A host name is judged before the request by n8n's egress filter
 * with its default rules, which refuse internal addresses whatever the instance's SSRF setting
 * (n8n 2.41 on); an n8n without that filter cannot tell where a name leads, so there only hosts
 * named by the node and IP addresses (judged by the package) are reached.
 */
import type {
	FunctionsBase,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	RequestHelperFunctions,
} from 'n8n-workflow';

export interface EgressAnswer {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: AsyncIterable<Buffer | string> & { destroy?: () => void };
}

export interface EgressExchange {
	url: URL;
	headers: Record<string, string>;
	signal: AbortSignal;
	named: boolean;
	admit(address: string): void;
	refuse(reason: string): never;
}

type EgressContext = Pick<FunctionsBase, 'getNode'> & {
	helpers: Partial<Pick<RequestHelperFunctions, 'getSecureEgressFilter'>> &
		Pick<RequestHelperFunctions, 'httpRequest'>;
};

/** Whether a URL's host is an IP address (already judged by the package before this). */
function isAddress(hostname: string): boolean {
	return hostname.startsWith('[') || /^[\d.]+$/.test(hostname);
}

export async function exchangeElsewhere(
	context: EgressContext,
	exchange: EgressExchange,
): Promise<EgressAnswer> {
	if (!exchange.named && !isAddress(exchange.url.hostname)) {
		const filter = context.helpers.getSecureEgressFilter?.('enforced');
		if (!filter)
			exchange.refuse(
				'this n8n (before 2.41) cannot tell which address a host name leads to; name the host in Allowed Internal Hosts to reach it anyway',
			);
		const checked = await filter.validateUrl(exchange.url);
		if (!checked.ok) exchange.refuse('it leads to an address that is not on the public internet');
	}
	const options: IHttpRequestOptions = {
		method: 'GET',
		url: exchange.url.href,
		headers: exchange.headers,
		returnFullResponse: true,
		ignoreHttpStatusErrors: true,
		disableFollowRedirect: true,
		maxRedirects: 0,
		encoding: 'stream',
		json: false,
		abortSignal: exchange.signal,
	};
	const response = (await context.helpers.httpRequest(options)) as IN8nHttpFullResponse;
	return {
		statusCode: response.statusCode,
		headers: response.headers as EgressAnswer['headers'],
		body: response.body as EgressAnswer['body'],
	};
}
