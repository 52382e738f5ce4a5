import { createHash, randomBytes } from 'node:crypto';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';

jest.setTimeout(60_000);

const node = new ProductDataIntegration();
const { emulator, credentials } = useEmulator(FAST_BUCKET);

const photo = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(2000)]);
const etag = `"${createHash('md5').update(photo).digest('hex')}"`;
const notFoundPage =
	'<!DOCTYPE html>\n<html><head><title>Not found</title></head><body>Sorry</body></html>';

/** A photo host: one photo with an ETag, and a shop's "not found" page answered with 200. */
let requests = 0;
let conditionalRequests = 0;
let host: LocalServer;

beforeAll(async () => {
	host = await listenLocal((req, res) => {
		requests++;
		if (req.url === '/p/gone.jpg') {
			res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(notFoundPage);
			return;
		}
		if (req.headers['if-none-match'] !== undefined) conditionalRequests++;
		if (req.headers['if-none-match'] === etag) {
			res.writeHead(304, { etag }).end();
			return;
		}
		res.writeHead(200, { 'content-type': 'image/jpeg', etag }).end(photo);
	});
});

afterAll(async () => await host.close());

beforeEach(async () => {
	requests = 0;
	conditionalRequests = 0;
	await runNode({
		node,
		parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
		credentials: credentials(),
	});
	emulator.reset();
});

const BY_URL: INodeParameters = {
	resource: 'image',
	operation: 'upload',
	imagesFrom: 'url',
	photoUrl: '={{ $json.url }}',
	options: {
		knownMd5: '={{ $json.knownMd5 ?? "" }}',
		knownHashcode: '={{ $json.knownHashcode ?? "" }}',
		knownVersion: '={{ $json.knownVersion ?? "" }}',
		allowedInternalHosts: '127.0.0.0/8',
	},
};

function imageRequests(): number {
	return emulator.stats().requests['POST /api/images'] ?? 0;
}

function at(path: string, known: Record<string, unknown> = {}): INodeExecutionData {
	return { json: { url: `${host.url}${path}`, ...known } };
}

describe('Image Upload by Photo URL: what the host sends', () => {
	it('fails alone an item whose host sends a page instead of its photo, before any image request', async () => {
		const run = await runNode({
			node,
			parameters: BY_URL,
			items: [at('/p/gone.jpg')],
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(imageRequests()).toBe(0);
		const { json, pairedItem } = run.output[0][0];
		expect(pairedItem).toEqual({ item: 0 });
		expect(json.error).toContain('Photo URL of item 0 is not an image');
		expect(json.error).toContain('an HTML page');
	});

	it('uploads the other items of the run: one request for the photo, none for the page', async () => {
		const run = await runNode({
			node,
			parameters: BY_URL,
			items: [at('/p/photo.jpg'), at('/p/gone.jpg'), at('/p/other.jpg')],
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(imageRequests()).toBe(1);
		expect(run.output[0].map(({ json }) => typeof json.hashcode)).toEqual([
			'string',
			'undefined',
			'string',
		]);
		expect(run.output[0][1].json.error).toContain('item 1');
		expect(run.output[0].map(({ pairedItem }) => pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
		]);
	});

	it('asks the host once for a URL that three items give back with its known values', async () => {
		const first = await runNode({
			node,
			parameters: BY_URL,
			items: [at('/p/photo.jpg')],
			credentials: credentials(),
		});
		const { md5, hashcode, version } = first.output[0][0].json;
		const known = { knownMd5: md5, knownHashcode: hashcode, knownVersion: version };
		requests = 0;
		emulator.reset();

		const night = await runNode({
			node,
			parameters: BY_URL,
			items: [at('/p/photo.jpg', known), at('/p/photo.jpg', known), at('/p/photo.jpg', known)],
			credentials: credentials(),
		});

		expect(night.error).toBeUndefined();
		expect(requests).toBe(1);
		expect(conditionalRequests).toBe(1);
		expect(imageRequests()).toBe(0);
		expect(night.output[0].map(({ json }) => [json.known, json.hashcode])).toEqual([
			['item', hashcode],
			['item', hashcode],
			['item', hashcode],
		]);
	});
});
