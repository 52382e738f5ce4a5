import { randomBytes } from 'node:crypto';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { runNode } from '../../scripts/n8n/in-process';
import { freePort } from '../../scripts/n8n/processes';
import { PROXY_VARIABLES, startProxy, type ProxyServer } from '../../scripts/proxy';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';

/**
 * Behind a company's proxy: photos by URL go through the proxy n8n is told about (HTTP_PROXY,
 * HTTPS_PROXY, NO_PROXY), each URL judged before it is handed over, and the proxy's password is
 * in nothing the node outputs. A real proxy (Debian's tinyproxy) passes the requests on and logs
 * each.
 */

jest.setTimeout(60_000);

const node = new ProductDataIntegration();
const { emulator, credentials } = useEmulator(FAST_BUCKET);
const PROXY_PASSWORD = 'proxy-s3cret';

const photo = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(2000)]);
let host: LocalServer;
let proxy: ProxyServer;
const saved = { ...process.env };

beforeAll(async () => {
	host = await listenLocal((req, res) => {
		if (req.url === '/p/1.jpg') res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo);
		else res.writeHead(404).end();
	});
	proxy = await startProxy({ user: 'staff', password: PROXY_PASSWORD });
});

afterAll(async () => {
	await host.close();
	await proxy.stop();
});

beforeEach(() => {
	for (const name of PROXY_VARIABLES) delete process.env[name];
	emulator.reset();
});

afterEach(() => {
	process.env = { ...saved };
});

/** Image Upload of the photo at `url`, the hosts of `allowed` named in Allowed Internal Hosts. */
async function uploadPhoto(url: string, allowed: string): Promise<INodeExecutionData> {
	const parameters: INodeParameters = {
		resource: 'image',
		operation: 'upload',
		imagesFrom: 'url',
		photoUrl: '={{ $json.url }}',
		options: { allowedInternalHosts: allowed },
	};
	const { output, error } = await runNode({
		node,
		parameters,
		items: [{ json: { url } }],
		credentials: credentials(),
		continueOnFail: true,
	});
	expect(error).toBeUndefined();
	expect(JSON.stringify(output)).not.toContain(PROXY_PASSWORD);
	return output[0][0];
}

const photoUrl = () => `${host.url}/p/1.jpg`;
const hostOf = (url: string) => new URL(url).host;
/** The emulator is reached directly: what goes through the proxy is the photos. */
const serviceDirect = () => hostOf(emulator.url);

describe('photos by URL behind a proxy', () => {
	it('go through the proxy HTTP_PROXY names, with its password, which nothing shows', async () => {
		process.env.HTTP_PROXY = proxy.url;
		process.env.NO_PROXY = serviceDirect();
		const item = await uploadPhoto(photoUrl(), hostOf(photoUrl()));
		expect(item.json.error).toBeUndefined();
		expect(item.json.hashcode).toEqual(expect.any(String));
		expect(proxy.requests()).toContain(`GET ${photoUrl()}`);
	});

	it('take the lowercase variable first, as n8n does', async () => {
		process.env.http_proxy = proxy.url;
		process.env.HTTP_PROXY = `http://127.0.0.1:${await freePort()}`;
		process.env.no_proxy = serviceDirect();
		const item = await uploadPhoto(photoUrl(), hostOf(photoUrl()));
		expect(item.json.error).toBeUndefined();
	});

	it('leave a host NO_PROXY names to a direct connection', async () => {
		process.env.HTTP_PROXY = proxy.url;
		process.env.NO_PROXY = `${serviceDirect()}, ${hostOf(photoUrl())}`;
		const before = proxy.requests().length;
		const item = await uploadPhoto(photoUrl(), hostOf(photoUrl()));
		expect(item.json.error).toBeUndefined();
		expect(proxy.requests().slice(before)).toEqual([]);
	});

	it('are judged before the proxy is asked: an internal address the node does not allow is refused', async () => {
		process.env.HTTP_PROXY = proxy.url;
		process.env.NO_PROXY = serviceDirect();
		const before = proxy.requests().length;
		const item = await uploadPhoto(photoUrl(), '');
		expect(item.json.error).toEqual(expect.stringContaining(photoUrl()));
		expect(proxy.requests().slice(before)).toEqual([]);
	});

	it("reach an https host through CONNECT, the TLS session the host's own", async () => {
		// A host whose certificate nobody trusts: the failure is its certificate, seen end to end.
		const tls = createTlsServer((_req, res) => res.end());
		tls.listen(0, '127.0.0.1');
		await new Promise((resolve) => tls.once('listening', resolve));
		const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/p/1.jpg`;
		try {
			process.env.HTTPS_PROXY = proxy.url;
			process.env.NO_PROXY = serviceDirect();
			const item = await uploadPhoto(url, hostOf(url));
			expect(item.json.errorDetails).toMatch(/SSL|TLS|certificate/);
			expect(proxy.requests()).toContain(`CONNECT ${hostOf(url)}`);
		} finally {
			tls.close();
		}
	});

	it('name a proxy that cannot be reached, without its password', async () => {
		const closed = await freePort();
		process.env.HTTP_PROXY = `http://staff:${PROXY_PASSWORD}@127.0.0.1:${closed}`;
		process.env.NO_PROXY = serviceDirect();
		const item = await uploadPhoto(photoUrl(), hostOf(photoUrl()));
		expect(JSON.stringify(item.json)).toContain(
			`The proxy http://127.0.0.1:${closed} (HTTP_PROXY)`,
		);
	});
});

describe("the service's requests behind a proxy", () => {
	it("go through it as n8n's own requests do, NO_PROXY honoured", async () => {
		process.env.HTTP_PROXY = proxy.url;
		const before = proxy.requests().length;
		const parameters = { resource: 'account', operation: 'getEnvironmentInfo' };
		const through = await runNode({ node, parameters, credentials: credentials() });
		expect(through.error).toBeUndefined();
		expect(proxy.requests().slice(before)).toEqual([`GET ${emulator.url}/api/auth/me`]);
		expect(JSON.stringify(through.output)).not.toContain(PROXY_PASSWORD);

		process.env.NO_PROXY = serviceDirect();
		const direct = await runNode({ node, parameters, credentials: credentials() });
		expect(direct.error).toBeUndefined();
		expect(proxy.requests().slice(before)).toHaveLength(1);
	});

	it('name the proxy, without its password, when it cannot be reached', async () => {
		const closed = await freePort();
		process.env.HTTP_PROXY = `http://staff:${PROXY_PASSWORD}@127.0.0.1:${closed}`;
		const { error } = await runNode({
			node,
			parameters: { resource: 'account', operation: 'getEnvironmentInfo' },
			credentials: credentials(),
		});
		expect(error?.message).toBe(
			`GET /api/auth/me failed: the proxy http://127.0.0.1:${closed} (HTTP_PROXY) could not be reached`,
		);
		expect(JSON.stringify(error)).not.toContain(PROXY_PASSWORD);
	});
});
