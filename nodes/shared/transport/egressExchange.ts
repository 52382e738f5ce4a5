/*
 * One GET to a host that is not the service. The full edition connects with a client of its own
 * (../ports: exchangeDirectly), judging the address in the connection's DNS lookup. The verified
 * edition (n8n Cloud) has none: a host name is resolved once, by n8n's egress filter with its
 * default rules, which refuse internal addresses whatever the instance's SSRF setting (n8n 2.41 on);
 * each address it answers is judged by the package's own rules too, and n8n's request helper is
 * told to connect to the address judged (its agent's host), so the name is not looked up again. An
 * n8n without that filter cannot tell where a name leads, so there only hosts named by the node and
 * IP addresses (judged by the package) are reached.
 */
import type {
	FunctionsBase,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	RequestHelperFunctions,
} from 'n8n-workflow';

import { edition, type DirectAnswer, type DirectLookup } from '../ports';
import { STREAMED_ANSWER } from './responses';

export type EgressAnswer = DirectAnswer;

export interface EgressExchange {
	url: URL;
	headers: Record<string, string>;
	signal: AbortSignal;
	/** Whether the node names this host (with its port): then the host's own name decides, not its address. */
	named: boolean;
	/** Throws when a connection for this URL must not go to `address`. */
	admit(address: string): void;
	/** The error for a host name without an address, or refused by the resolver or egress filter. */
	unresolved(error: Error): Error;
	/** Throws the refusal of this URL, saying why. */
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

/** Every address a name has, as n8n's resolver answers it. */
async function addressesOf(lookup: DirectLookup, hostname: string): Promise<string[]> {
	return await new Promise((resolve, reject) =>
		lookup(hostname, { all: true }, (error, found) => {
			if (error) return reject(error);
			const entries = Array.isArray(found) ? found : [{ address: found }];
			resolve(entries.map((entry) => (typeof entry === 'string' ? entry : entry.address)));
		}),
	);
}

/**
 * The one address a connection goes to: the first IPv4 one, which every network reaches, else the
 * first. The helper then tries no other (no fallback between families).
 */
function connectionAddress(addresses: string[]): string {
	return addresses.find((address) => !address.includes(':')) ?? addresses[0];
}

export async function exchangeElsewhere(
	context: EgressContext,
	exchange: EgressExchange,
): Promise<EgressAnswer> {
	const { exchangeDirectly } = edition();
	if (exchangeDirectly) {
		const filter = context.helpers.getSecureEgressFilter?.('safe');
		return await exchangeDirectly({ ...exchange, resolver: filter?.createSecureLookup() });
	}
	// No client of the package's own (the verified edition): the name is resolved here, once, and the
	// helper connects to the address judged, not to whatever the name answers a second time.
	let judged: string | undefined;
	if (!exchange.named && !isAddress(exchange.url.hostname)) {
		const filter = context.helpers.getSecureEgressFilter?.('enforced');
		if (!filter)
			exchange.refuse(
				'this n8n (before 2.41) cannot tell which address a host name leads to; name the host in Allowed Internal Hosts to reach it anyway',
			);
		// n8n's lookup refuses a name with an address its rules count internal; a name it cannot
		// resolve fails alike.
		const addresses = await addressesOf(filter.createSecureLookup(), exchange.url.hostname).catch(
			(error: unknown) => Promise.reject(exchange.unresolved(error as Error)),
		);
		// n8n's default ranges lack some the package counts as internal (NAT64, SIIT): every address
		// the name has is judged by the package as well, as an address written in a URL is.
		for (const address of addresses) exchange.admit(address);
		// Without an address to connect to, the helper would look the name up itself.
		if (addresses.length === 0)
			throw exchange.unresolved(new Error(`${exchange.url.hostname} has no address`));
		judged = connectionAddress(addresses);
	}
	const options: IHttpRequestOptions = {
		method: 'GET',
		url: exchange.url.href,
		headers: exchange.headers,
		...STREAMED_ANSWER,
		abortSignal: exchange.signal,
		// The agent's host is where the connection goes; the URL's name stays the Host header and the
		// name the certificate is checked against. Behind a proxy n8n asks for plain http by name but
		// tunnels https to this address: the node cannot tell whether n8n uses one (it reads no
		// environment), and a pin dropped for the proxy would be dropped for direct connections too.
		...(judged !== undefined && { agentOptions: { host: judged } }),
	};
	const response = (await context.helpers.httpRequest(options)) as IN8nHttpFullResponse;
	return {
		statusCode: response.statusCode,
		headers: response.headers as EgressAnswer['headers'],
		body: response.body as EgressAnswer['body'],
	};
}
