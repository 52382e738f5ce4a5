import { createHash, randomBytes } from 'node:crypto';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';

jest.setTimeout(60_000);

const node = new ProductDataIntegration();
const { emulator, credentials } = useEmulator(FAST_BUCKET);

function jpeg(size: number): Buffer {
	return Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(size - 4)]);
}

function md5(data: Buffer): string {
	return createHash('md5').update(data).digest('hex');
}

/**
 * A photo host answering after a delay, with an ETag and "not modified" to a request that gives it
 * back; counts the requests it is answering at the same time.
 */
const photos = new Map<string, Buffer>();
let answering = 0;
let mostAtOnce = 0;
let requests = 0;
let host: LocalServer;

beforeAll(async () => {
	host = await listenLocal((req, res) => {
		requests++;
		answering++;
		mostAtOnce = Math.max(mostAtOnce, answering);
		setTimeout(() => {
			answering--;
			const photo = photos.get(req.url ?? '');
			const etag = `"${req.url}"`;
			if (!photo) res.writeHead(404).end();
			else if (req.headers['if-none-match'] === etag) res.writeHead(304, { etag }).end();
			else res.writeHead(200, { 'content-type': 'image/jpeg', etag }).end(photo);
		}, 40);
	});
});

afterAll(async () => await host.close());

beforeEach(async () => {
	photos.clear();
	answering = 0;
	mostAtOnce = 0;
	requests = 0;
	await runNode({
		node,
		parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
		credentials: credentials(),
	});
	emulator.reset();
});

function byUrl(options: INodeParameters = {}): INodeParameters {
	return {
		resource: 'image',
		operation: 'upload',
		imagesFrom: 'url',
		photoUrl: '={{ $json.url }}',
		options: { allowedInternalHosts: new URL(host.url).host, ...options },
	};
}

function products(count: number, size: number): INodeExecutionData[] {
	return Array.from({ length: count }, (_, n) => {
		photos.set(`/p/${n}.jpg`, jpeg(size));
		return { json: { url: `${host.url}/p/${n}.jpg` } };
	});
}

describe('Image Upload by Photo URL: photos fetched side by side', () => {
	it('fetches 8 photos at once by default, each once, and keeps every output in its item order', async () => {
		const items = products(24, 2_000);

		const run = await runNode({ node, parameters: byUrl(), items, credentials: credentials() });

		expect(run.error).toBeUndefined();
		expect(mostAtOnce).toBe(8);
		expect(requests).toBe(24);
		expect(run.output[0].map(({ pairedItem }) => pairedItem)).toEqual(
			items.map((_, item) => ({ item })),
		);
		expect(run.output[0].map(({ json }) => json.md5)).toEqual(
			items.map((_, n) => md5(photos.get(`/p/${n}.jpg`) as Buffer)),
		);
	});

	it('revalidates 8 photos at once when the host answers every one "not modified"', async () => {
		const items = products(24, 2_000);
		const first = await runNode({ node, parameters: byUrl(), items, credentials: credentials() });
		expect(first.error).toBeUndefined();
		mostAtOnce = 0;
		requests = 0;

		const again = await runNode({
			node,
			parameters: byUrl({
				knownMd5: '={{ $json.md5 }}',
				knownHashcode: '={{ $json.hashcode }}',
				knownVersion: '={{ $json.version }}',
			}),
			items: first.output[0].map(({ json }) => ({ json })),
			credentials: credentials(),
		});

		expect(again.error).toBeUndefined();
		expect(mostAtOnce).toBe(8);
		expect(requests).toBe(24);
		expect(again.output[0].map(({ json }) => json.known)).toEqual(items.map(() => 'item'));
	});

	it('fetches at most Photos At Once at a time', async () => {
		const run = await runNode({
			node,
			parameters: byUrl({ photosAtOnce: 3 }),
			items: products(12, 2_000),
			credentials: credentials(),
		});

		expect(run.error).toBeUndefined();
		expect(mostAtOnce).toBe(3);
	});

	it('fetches one at a time when two photos would not fit in Max Request Size beside what waits', async () => {
		const run = await runNode({
			node,
			parameters: byUrl({ maxRequestMegabytes: 0.1 }),
			items: products(6, 60_000),
			credentials: credentials(),
		});

		expect(run.error).toBeUndefined();
		expect(mostAtOnce).toBe(1);
		expect(run.output[0]).toHaveLength(6);
	});

	it('fails alone an item whose photo is missing while the others are fetched ahead', async () => {
		const items = products(10, 2_000);
		photos.delete('/p/4.jpg');

		const run = await runNode({
			node,
			parameters: byUrl(),
			items,
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(run.output[0].map(({ json }) => typeof json.error)).toEqual(
			items.map((_, n) => (n === 4 ? 'string' : 'undefined')),
		);
		expect(run.output[0][4].json.error).toContain('item 4');
	});
});
