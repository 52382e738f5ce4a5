/*
 * The proxy n8n is told about, for the full edition's own client (./directExchange.ts): n8n sends
 * its own requests, the service's included, through the proxy that HTTP_PROXY, HTTPS_PROXY,
 * ALL_PROXY and NO_PROXY name (each lowercase first, as n8n reads them with proxy-from-env), and a
 * photo or an error document on another host goes the same way. The target is judged before it is
 * handed to the proxy (./directExchange.ts); what the proxy then connects to is the proxy's rule.
 */
import { ProxyAgent, request } from 'undici';

import type { DirectAnswer, DirectRequest } from '../ports';

const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/** An environment variable by its lowercase name, then its uppercase one. */
function variable(name: string): { name: string; value: string } | undefined {
	for (const spelling of [name.toLowerCase(), name.toUpperCase()]) {
		const value = process.env[spelling];
		if (value) return { name: spelling, value };
	}
	return undefined;
}

/** Whether NO_PROXY leaves the host (its name, or IP address as written in the URL) and port to a direct connection. */
function bypassed(hostname: string, port: number): boolean {
	const noProxy = (
		variable('npm_config_no_proxy')?.value ??
		variable('no_proxy')?.value ??
		''
	).toLowerCase();
	if (noProxy === '') return false;
	if (noProxy === '*') return true;
	return noProxy.split(/[,\s]/).some((entry) => {
		if (entry === '') return false;
		const withPort = /^(.+):(\d+)$/.exec(entry);
		const host = withPort ? withPort[1] : entry;
		if (withPort && Number(withPort[2]) !== port) return false;
		if (!/^[.*]/.test(host)) return hostname === host;
		return hostname.endsWith(host.startsWith('*') ? host.slice(1) : host);
	});
}

/** The proxy for a URL, and the variable that names it. */
export interface ProxyChoice {
	url: URL;
	variable: string;
}

/** The proxy n8n would send a request to `url` through, or none (no proxy set, or NO_PROXY names it). */
export function proxyFor(url: URL): ProxyChoice | undefined {
	const scheme = url.protocol.replace(/:$/, '');
	const port = Number(url.port) || DEFAULT_PORTS[scheme] || 0;
	if (bypassed(url.hostname.toLowerCase(), port)) return undefined;
	const named =
		variable(`npm_config_${scheme}_proxy`) ??
		variable(`${scheme}_proxy`) ??
		variable('npm_config_proxy') ??
		variable('all_proxy');
	if (!named) return undefined;
	const written = named.value.includes('://') ? named.value : `${scheme}://${named.value}`;
	if (!URL.canParse(written))
		throw new Error(`The proxy in ${named.name} is not a URL: set it as http://host:port`);
	return { url: new URL(written), variable: named.name };
}

/** The proxy as it may be shown: without its user name and password. */
export function describeProxy({ url, variable }: ProxyChoice): string {
	return `${url.protocol}//${url.host} (${variable})`;
}

/** The proxy n8n sends a request to `url` through, as it may be shown; none without one. */
export function shownProxyOf(url: URL): string | undefined {
	try {
		const proxy = proxyFor(url);
		return proxy && describeProxy(proxy);
	} catch {
		// A proxy setting that is not a URL: n8n's own request failed on it, and says so.
		return undefined;
	}
}

/**
 * Failures to reach the proxy itself: the target is the proxy's to reach, and what goes wrong
 * there comes back as the proxy's answer.
 */
const UNREACHABLE = new Set([
	'ECONNREFUSED',
	'ECONNRESET',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
	'ETIMEDOUT',
	'UND_ERR_CONNECT_TIMEOUT',
]);

/** One client per proxy: connections to the proxy are reused, each target judged before it is asked for. */
const agents = new Map<string, ProxyAgent>();

function agentFor(proxy: URL): ProxyAgent {
	let agent = agents.get(proxy.href);
	if (!agent) {
		// Plain http goes to the proxy as an absolute URL; https through CONNECT, so that the TLS
		// session (and the certificate checked in it) is the target's own.
		agent = new ProxyAgent({ uri: proxy.href, proxyTunnel: false });
		agents.set(proxy.href, agent);
	}
	return agent;
}

/** An error of the exchange through `proxy` that names the proxy, without its credentials. */
function proxyError(error: unknown, proxy: ProxyChoice): Error {
	const { code, message = String(error) } = error as { code?: string; message?: string };
	// The proxy's own URL may carry its password: the message names it by host alone.
	const reason = message.replaceAll(proxy.url.href, proxy.url.host);
	const what = UNREACHABLE.has(code ?? '')
		? `The proxy ${describeProxy(proxy)} could not be reached`
		: `Through the proxy ${describeProxy(proxy)}`;
	return Object.assign(new Error(`${what}: ${reason}`), { code });
}

/** One GET through the proxy; a cancelled one fails as cancelled, any other failure names the proxy. */
export async function exchangeThroughProxy(
	exchange: DirectRequest,
	proxy: ProxyChoice,
): Promise<DirectAnswer> {
	const answer = await request(exchange.url, {
		method: 'GET',
		headers: exchange.headers,
		signal: exchange.signal,
		dispatcher: agentFor(proxy.url),
	}).catch(
		async (error: unknown) =>
			await Promise.reject(exchange.signal.aborted ? error : proxyError(error, proxy)),
	);
	return { statusCode: answer.statusCode, headers: answer.headers, body: answer.body };
}
