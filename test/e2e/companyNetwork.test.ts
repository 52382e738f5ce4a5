/**
 * Inside a company network, in a real n8n: the service and a photo host on https signed by the
 * company's own certificate authority are reached where NODE_EXTRA_CA_CERTS names the authority
 * (what n8n's docs tell users to set) and refused, naming the certificate, where it does not (the
 * service behind a TLS front of the test's own that forwards to the emulator); with the proxy set
 * for n8n (HTTP_PROXY, HTTPS_PROXY), the service's requests and the photos go through it, https
 * through CONNECT, and its password shows nowhere. The proxy is Debian's tinyproxy, its log read.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as forward } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';

import { makeCertificates } from '../../scripts/certificates';
import { startProxy, type ProxyServer } from '../../scripts/proxy';
import {
	actionNode,
	chainWorkflow,
	ITEMS_NAME,
	nodeItems,
	prepareN8n,
	runError,
	type N8nHarness,
} from './harness';

const PROXY_PASSWORD = 'proxy-s3cret';
const photo = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(2000)]);

let certificates: string;
let photoHost: Server;
let photoUrl: string;
let proxy: ProxyServer;
let company: N8nHarness;
let plain: N8nHarness;
const fronts: Server[] = [];

/** The key and certificate the company's authority signed, for its hosts. */
function signed() {
	return {
		key: readFileSync(join(certificates, 'server.key')),
		cert: readFileSync(join(certificates, 'server.crt')),
	};
}

/**
 * The service of `harness` on https: a TLS front with the company's certificate that forwards every
 * request to the harness's emulator; a credential of that harness with the front as its Base URL.
 */
async function serviceOnHttps(
	harness: N8nHarness,
): Promise<{ id: string; name: string; baseUrl: string }> {
	const target = new URL(harness.emulator.url);
	const front = createServer(signed(), (incoming, outgoing) => {
		const onward = forward(
			{
				host: target.hostname,
				port: target.port,
				method: incoming.method,
				path: incoming.url,
				headers: incoming.headers,
			},
			(answer) => {
				outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
				answer.pipe(outgoing);
			},
		);
		onward.on('error', () => outgoing.destroy());
		incoming.pipe(onward);
	});
	fronts.push(front);
	front.listen(0, '127.0.0.1');
	await once(front, 'listening');
	const baseUrl = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
	return { ...(await harness.createCredential('Company service on https', { baseUrl })), baseUrl };
}

beforeAll(async () => {
	certificates = mkdtempSync(join(tmpdir(), 'company-ca-'));
	makeCertificates(certificates, 'Company Root CA');
	photoHost = createServer(signed(), (_req, res) =>
		res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo),
	);
	photoHost.listen(0, '127.0.0.1');
	await once(photoHost, 'listening');
	photoUrl = `https://127.0.0.1:${(photoHost.address() as AddressInfo).port}/p/1.jpg`;
	proxy = await startProxy({ user: 'staff', password: PROXY_PASSWORD });
	plain = await prepareN8n();
	company = await prepareN8n({
		env: {
			NODE_EXTRA_CA_CERTS: join(certificates, 'ca.crt'),
			HTTP_PROXY: proxy.url,
			HTTPS_PROXY: proxy.url,
		},
	});
});

afterAll(async () => {
	await company?.stop();
	await plain?.stop();
	await proxy?.stop();
	photoHost?.close();
	for (const front of fronts) front.close();
	if (certificates) rmSync(certificates, { recursive: true, force: true });
});

/** Image Upload of the photo by its URL, its host (on this machine) named in Allowed Internal Hosts. */
function photoWorkflow() {
	return chainWorkflow(
		'Company photo',
		[{ json: { url: photoUrl } }],
		[
			actionNode('Upload Photo', {
				resource: 'image',
				operation: 'upload',
				imagesFrom: 'url',
				photoUrl: '={{ $json.url }}',
				options: { allowedInternalHosts: new URL(photoUrl).host },
			}),
		],
	);
}

test("reaches a host the company's CA signed, through the proxy, the service's requests with it", async () => {
	const run = await company.run(photoWorkflow());
	const [uploaded] = nodeItems(run, 'Upload Photo');
	expect(uploaded.hashcode).toMatch(/^[0-9a-f]{32}$/);
	const passed = proxy.requests();
	expect(passed).toContain(`CONNECT ${new URL(photoUrl).host}`);
	expect(passed).toContain(`POST ${company.emulator.url}/api/images`);
	expect(JSON.stringify(run)).not.toContain(PROXY_PASSWORD);
	expect(company.server.log()).not.toContain(PROXY_PASSWORD);
});

test("refuses a host the company's CA signed where n8n is not told of the CA, naming the certificate", async () => {
	const run = await plain.run(photoWorkflow(), { expect: 'failure' });
	const error = runError(run);
	expect(error?.message).toContain(`The photo ${photoUrl} of item 0 could not be fetched`);
	expect(error?.description).toMatch(/certificate/i);
});

/** Environment info, then an XML upload, with the credential of the service on https. */
function serviceWorkflow(credential: { id: string; name: string }) {
	return chainWorkflow(
		'Company service',
		[{ json: { xml: '<Products><Product><Sku>CO-1</Sku></Product></Products>' } }],
		[
			actionNode('Info', { resource: 'account', operation: 'getEnvironmentInfo' }, { credential }),
			actionNode(
				'Upload',
				{
					resource: 'document',
					operation: 'upload',
					source: 'text',
					xml: `={{ $('${ITEMS_NAME}').item.json.xml }}`,
				},
				{ credential },
			),
		],
	);
}

test("reaches the service on https the company's CA signed, through the proxy", async () => {
	const credential = await serviceOnHttps(company);
	const uploadsBefore = company.emulator.stats().uploads;
	const run = await company.run(serviceWorkflow(credential));
	expect(nodeItems(run, 'Info')).toHaveLength(1);
	const [uploaded] = nodeItems(run, 'Upload');
	expect(uploaded.sessionId).toMatch(/^[0-9a-f-]{36}$/);
	expect(company.emulator.stats().uploads).toBe(uploadsBefore + 1);
	expect(proxy.requests()).toContain(`CONNECT ${new URL(credential.baseUrl).host}`);
});

test("refuses the service on https the company's CA signed where n8n is not told of the CA, saying it is the certificate", async () => {
	const credential = await serviceOnHttps(plain);
	const requestsBefore = plain.emulator.stats().requests;
	const run = await plain.run(serviceWorkflow(credential), { expect: 'failure' });
	const error = runError(run);
	expect(error?.node).toBe('Info');
	expect(error?.message).toMatch(
		/^GET \/api\/auth\/me failed: the service's TLS certificate was not accepted \(unable to verify the first certificate/,
	);
	expect(error?.description).toContain('NODE_EXTRA_CA_CERTS');
	expect(plain.emulator.stats().requests).toEqual(requestsBefore);
});
