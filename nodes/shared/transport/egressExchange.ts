/*
 * One GET to a host that is not the service (a photo host, an error document's host), in the full
 * edition: through Node's own client, so that the address a connection goes to is judged where it
 * is chosen, in the connection's DNS lookup, with no second resolution that could answer otherwise.
 * The verified edition (n8n Cloud, no node:http or node:dns) is built with ./egressExchange.verified.ts.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpGet, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsGet } from 'node:https';
import type { FunctionsBase, RequestHelperFunctions } from 'n8n-workflow';

/** The host's answer: its status, headers as sent, and its body to be read as it arrives. */
export interface EgressAnswer {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: AsyncIterable<Buffer | string> & { destroy?: () => void };
}

export interface EgressExchange {
	url: URL;
	headers: Record<string, string>;
	signal: AbortSignal;
	/** Whether the node names this host (with its port): then the host's own name decides, not its address. */
	named: boolean;
	/** Throws when a connection for this URL must not go to `address`. */
	admit(address: string): void;
	/** Throws the refusal of this URL, saying why. */
	refuse(reason: string): never;
}

type LookupFunction = NonNullable<RequestOptions['lookup']>;

type EgressContext = Pick<FunctionsBase, 'getNode'> & {
	helpers: Partial<Pick<RequestHelperFunctions, 'getSecureEgressFilter'>> &
		Pick<RequestHelperFunctions, 'httpRequest'>;
};

/**
 * n8n's own resolver where the running n8n offers it (2.41 on): it also applies the instance's
 * SSRF rules when N8N_SSRF_PROTECTION_ENABLED is on. Node's resolver otherwise.
 */
function resolverOf(context: EgressContext): LookupFunction {
	const filter = context.helpers.getSecureEgressFilter?.('safe');
	return filter ? filter.createSecureLookup() : (dnsLookup as LookupFunction);
}

export async function exchangeElsewhere(
	context: EgressContext,
	exchange: EgressExchange,
): Promise<EgressAnswer> {
	const resolve = resolverOf(context);
	const lookup: LookupFunction = (hostname, options, callback) => {
		resolve(hostname, { ...options, all: true }, (error, found) => {
			const addresses = (Array.isArray(found) ? found : []) as LookupAddress[];
			if (error || addresses.length === 0)
				return callback(error ?? new Error(`${hostname} has no address`), '', 4);
			try {
				for (const { address } of addresses) exchange.admit(address);
			} catch (refusal) {
				return callback(refusal as Error, '', 4);
			}
			if (options.all) return callback(null, addresses);
			callback(null, addresses[0].address, addresses[0].family);
		});
	};
	const send = exchange.url.protocol === 'https:' ? httpsGet : httpGet;
	return await new Promise<EgressAnswer>((resolve, reject) => {
		const request = send(exchange.url, {
			method: 'GET',
			headers: exchange.headers,
			lookup,
			signal: exchange.signal,
			// A connection of its own: a pooled socket was judged for another request.
			agent: false,
		});
		request.once('response', (response: IncomingMessage) =>
			resolve({
				statusCode: response.statusCode ?? 0,
				headers: response.headers,
				body: response,
			}),
		);
		request.once('error', reject);
		request.end();
	});
}
