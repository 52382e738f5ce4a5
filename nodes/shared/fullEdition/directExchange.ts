/*
 * One GET to a host that is not the service (a photo host, an error document's host), for the full
 * edition: through Node's own client, so that the address a connection goes to is judged where it
 * is chosen, in the connection's DNS lookup, with no second resolution that could answer otherwise;
 * or, where n8n is told to use a proxy for the URL, through that proxy once every address of the
 * name has been judged (./proxy.ts).
 * The verified edition (n8n Cloud, no node:http or node:dns) has no such client: the transport then
 * goes through n8n's request helper (../transport/egressExchange.ts).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpGet, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsGet } from 'node:https';

import type { DirectAnswer, DirectRequest } from '../ports';
import { exchangeThroughProxy, proxyFor } from './proxy';

type LookupFunction = NonNullable<RequestOptions['lookup']>;

export async function exchangeDirectly(exchange: DirectRequest): Promise<DirectAnswer> {
	const resolve = (exchange.resolver ?? dnsLookup) as LookupFunction;
	const lookup: LookupFunction = (hostname, options, callback) => {
		resolve(hostname, { ...options, all: true }, (error, found) => {
			const addresses = (Array.isArray(found) ? found : []) as LookupAddress[];
			if (error || addresses.length === 0)
				return callback(
					exchange.unresolved(error ?? new Error(`${hostname} has no address`)),
					'',
					4,
				);
			try {
				for (const { address } of addresses) exchange.admit(address);
			} catch (refusal) {
				return callback(refusal as Error, '', 4);
			}
			if (options.all) return callback(null, addresses);
			callback(null, addresses[0].address, addresses[0].family);
		});
	};
	const proxy = proxyFor(exchange.url);
	if (proxy) {
		// The proxy looks the name up itself: every address the name has now is judged first.
		await new Promise<void>((resolve, reject) =>
			lookup(exchange.url.hostname.replace(/^\[|\]$/g, ''), { all: true }, (error) =>
				error ? reject(error) : resolve(),
			),
		);
		return await exchangeThroughProxy(exchange, proxy);
	}
	const send = exchange.url.protocol === 'https:' ? httpsGet : httpGet;
	return await new Promise<DirectAnswer>((resolve, reject) => {
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
