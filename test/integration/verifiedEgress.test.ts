/**
 * The verified edition's way out to other hosts, through n8n-core's own request helper: a host name
 * is resolved once, and the helper connects to the address judged; it does not look the name up a
 * second time, where a name could answer otherwise (DNS rebinding). The names end in `.invalid`,
 * which no resolver answers: only the stand-in egress filter knows them, so a request that reached
 * its host connected to the address the package judged. Over https the certificate is still checked
 * against the name, not the address. Behind a proxy (Debian's tinyproxy, its log read for each
 * request) plain http is asked for by name, https is tunnelled to the address judged, and a host
 * NO_PROXY names is reached directly.
 */
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';

import { EDITION as fullEdition } from '../../nodes/edition/edition';
import { EDITION as verifiedEdition } from '../../nodes/edition/edition.verified';
import { useEdition } from '../../nodes/shared/ports';
import {
	parseAllowance,
	requestElsewhere,
	type ServiceContext,
} from '../../nodes/shared/transport';
import { makeCertificates } from '../../scripts/certificates';
import { createContext, emulatorCredentials } from '../../scripts/n8n/in-process';
import { PROXY_VARIABLES, startProxy, type ProxyServer } from '../../scripts/proxy';
import { failure } from '../helpers/service';

/** Node's default authorities, which the tests' Node 24 can extend (the types predate it). */
const authorities = tls as typeof tls & {
	getCACertificates(type: 'default'): string[];
	setDefaultCACertificates(certificates: string[]): void;
};

/**
 * What the stand-in filter answers: the names no real resolver knows, on this machine, and
 * `localhost`, the one name a proxy (which resolves names itself) finds here too.
 */
const NAMES: Record<string, string> = {
	'photos.pinned.invalid': '127.0.0.1',
	'other.pinned.invalid': '127.0.0.1',
	localhost: '127.0.0.1',
};

/** n8n's egress filter as n8n 2.41 hands it out, answering the names above. */
const filter = {
	createSecureLookup:
		() =>
		(
			hostname: string,
			_options: unknown,
			callback: (error: Error | null, found: Array<{ address: string; family: number }>) => void,
		) => {
			const address = NAMES[hostname];
			setImmediate(() =>
				address
					? callback(null, [{ address, family: 4 }])
					: callback(new Error(`getaddrinfo ENOTFOUND ${hostname}`), []),
			);
		},
	validateUrl: async () => await Promise.resolve({ ok: true as const, result: undefined }),
};

let certificates: string;
const trusted = authorities.getCACertificates('default');
const seen: IncomingHttpHeaders[] = [];
const servers: Server[] = [];

async function listen(server: Server): Promise<number> {
	servers.push(server);
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	return (server.address() as AddressInfo).port;
}

const answer = (
	request: { headers: IncomingHttpHeaders },
	response: { end(body: string): void },
) => {
	seen.push(request.headers);
	response.end('photo');
};

beforeAll(() => {
	useEdition(verifiedEdition);
	certificates = mkdtempSync(join(tmpdir(), 'pinned-ca-'));
	// The server certificate names two of the names above, and the address they lead to.
	makeCertificates(certificates, 'Pinned Test CA', ['photos.pinned.invalid', 'localhost']);
	authorities.setDefaultCACertificates([
		...trusted,
		readFileSync(join(certificates, 'ca.crt'), 'utf8'),
	]);
});

afterAll(() => {
	useEdition(fullEdition);
	authorities.setDefaultCACertificates(trusted);
	for (const server of servers) server.close();
	rmSync(certificates, { recursive: true, force: true });
});

beforeEach(() => (seen.length = 0));

/** A node's context with n8n-core's request helper and the stand-in filter. */
function context(): ServiceContext {
	const node = createContext({
		credentials: emulatorCredentials({ url: 'https://integration.example.com' }),
	});
	Object.assign(node.helpers, { getSecureEgressFilter: () => filter });
	return node as unknown as ServiceContext;
}

async function get(url: string): Promise<number> {
	const answered = await requestElsewhere(context(), {
		url,
		headers: {},
		signal: AbortSignal.timeout(10_000),
		// The address judged is on this machine: the node lets this network be reached.
		allowance: parseAllowance('127.0.0.0/8'),
		plainHttp: true,
	});
	answered.body.destroy?.();
	return answered.statusCode;
}

it('connects to the address judged, the name kept in the Host header, without looking it up again', async () => {
	const port = await listen(createHttpServer(answer));
	expect(await get(`http://photos.pinned.invalid:${port}/p.jpg`)).toBe(200);
	expect(seen.map((headers) => headers.host)).toEqual([`photos.pinned.invalid:${port}`]);
});

it("checks an https host's certificate against the name, not the address it connects to", async () => {
	const key = readFileSync(join(certificates, 'server.key'));
	const cert = readFileSync(join(certificates, 'server.crt'));
	const port = await listen(createHttpsServer({ key, cert }, answer));
	expect(await get(`https://photos.pinned.invalid:${port}/p.jpg`)).toBe(200);
	// The certificate names 127.0.0.1, where the connection goes, but not this name.
	const error = await failure(get(`https://other.pinned.invalid:${port}/p.jpg`));
	expect(error.message).toMatch(/not in the cert's altnames/);
	expect(error.message).toContain('other.pinned.invalid');
	expect(seen).toHaveLength(1);
});

describe('behind the proxy n8n is told about', () => {
	const saved = { ...process.env };
	let proxy: ProxyServer;

	beforeAll(async () => (proxy = await startProxy()));
	afterAll(async () => await proxy.stop());

	beforeEach(() => {
		for (const name of PROXY_VARIABLES) delete process.env[name];
	});
	afterEach(() => (process.env = { ...saved }));

	it('asks the proxy for a plain-http photo by its name, as an absolute URL', async () => {
		const port = await listen(createHttpServer(answer));
		process.env.HTTP_PROXY = proxy.url;
		const url = `http://localhost:${port}/p.jpg`;
		const before = proxy.requests().length;
		expect(await get(url)).toBe(200);
		expect(proxy.requests().slice(before)).toEqual([`GET ${url}`]);
		expect(seen.map((headers) => headers.host)).toEqual([`localhost:${port}`]);
	});

	// n8n 2.41 hands the agent's host to the tunnel as well as to a direct connection, and the node
	// cannot tell which the helper takes (it reads no environment): the proxy is asked for the
	// address judged, and the name travels in the TLS handshake alone.
	it('asks the proxy to CONNECT to the address judged for an https photo, the certificate checked against the name', async () => {
		const key = readFileSync(join(certificates, 'server.key'));
		const cert = readFileSync(join(certificates, 'server.crt'));
		const serverNames: unknown[] = [];
		const server = createHttpsServer({ key, cert }, (request, response) => {
			serverNames.push((request.socket as tls.TLSSocket).servername);
			answer(request, response);
		});
		const port = await listen(server);
		process.env.HTTPS_PROXY = proxy.url;
		const tunnel = `CONNECT 127.0.0.1:${port}`;
		const before = proxy.requests().length;
		expect(await get(`https://localhost:${port}/p.jpg`)).toBe(200);
		expect(proxy.requests().slice(before)).toEqual([tunnel]);
		expect(serverNames).toEqual(['localhost']);
		expect(seen.map((headers) => headers.host)).toEqual([`localhost:${port}`]);
		// Through the tunnel too, a name the certificate lacks is refused though its address is in it.
		const error = await failure(get(`https://other.pinned.invalid:${port}/p.jpg`));
		expect(error.message).toMatch(/not in the cert's altnames/);
		expect(proxy.requests().slice(before)).toEqual([tunnel, tunnel]);
		expect(seen).toHaveLength(1);
	});

	it('reaches a host NO_PROXY names directly, at the address judged', async () => {
		const port = await listen(createHttpServer(answer));
		process.env.HTTP_PROXY = proxy.url;
		process.env.NO_PROXY = 'photos.pinned.invalid';
		const before = proxy.requests().length;
		// No resolver knows the name: only a connection to the address judged reaches the host.
		expect(await get(`http://photos.pinned.invalid:${port}/p.jpg`)).toBe(200);
		expect(proxy.requests().slice(before)).toEqual([]);
		expect(seen.map((headers) => headers.host)).toEqual([`photos.pinned.invalid:${port}`]);
	});
});
