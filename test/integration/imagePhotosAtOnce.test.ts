import { createHash, randomBytes } from 'node:crypto';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { RunImages } from '../../nodes/ProductDataIntegration/actions/image/itemImages';
import { uploadSettings } from '../../nodes/ProductDataIntegration/actions/image/uploadSettings';
import { RunParameters } from '../../nodes/ProductDataIntegration/actions/runParameters';
import { createContext, runNode } from '../../scripts/n8n/in-process';
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
 * back; counts the requests it is answering at the same time. The photos in `slowPaths` are
 * answered only after seconds: the requests for them settle when answered or closed unanswered.
 */
const photos = new Map<string, Buffer>();
const slowPaths = new Set<string>();
let answering = 0;
let mostAtOnce = 0;
let requests = 0;
let slowRequests: Array<Promise<'answered' | 'closed unanswered'>> = [];
let host: LocalServer;

beforeAll(async () => {
	host = await listenLocal((req, res) => {
		requests++;
		answering++;
		mostAtOnce = Math.max(mostAtOnce, answering);
		const slow = slowPaths.has(req.url ?? '');
		if (slow)
			slowRequests.push(
				new Promise((settled) =>
					res.once('close', () => settled(res.writableFinished ? 'answered' : 'closed unanswered')),
				),
			);
		const answer = setTimeout(
			() => {
				answering--;
				const photo = photos.get(req.url ?? '');
				const etag = `"${req.url}"`;
				if (!photo) res.writeHead(404).end();
				else if (req.headers['if-none-match'] === etag) res.writeHead(304, { etag }).end();
				else res.writeHead(200, { 'content-type': 'image/jpeg', etag }).end(photo);
			},
			slow ? 5_000 : 40,
		);
		res.once('close', () => clearTimeout(answer));
	});
});

afterAll(async () => await host.close());

beforeEach(async () => {
	photos.clear();
	slowPaths.clear();
	slowRequests = [];
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

/** The photo host is on this machine: named in Allowed Internal Hosts, as an intranet host would be. */
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
	it('fetches 12 photos at once by default, each once, and keeps every output in its item order', async () => {
		const items = products(36, 2_000);

		const run = await runNode({ node, parameters: byUrl(), items, credentials: credentials() });

		expect(run.error).toBeUndefined();
		expect(mostAtOnce).toBe(12);
		expect(requests).toBe(36);
		expect(run.output[0].map(({ pairedItem }) => pairedItem)).toEqual(
			items.map((_, item) => ({ item })),
		);
		expect(run.output[0].map(({ json }) => json.md5)).toEqual(
			items.map((_, n) => md5(photos.get(`/p/${n}.jpg`) as Buffer)),
		);
	});

	it('revalidates 12 photos at once when the host answers every one "not modified"', async () => {
		const items = products(36, 2_000);
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
		expect(mostAtOnce).toBe(12);
		expect(requests).toBe(36);
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

describe('Image Upload by Photo URL: photos fetched ahead end with their run', () => {
	it('closes the requests of the photos fetched ahead when a failing item ends the run', async () => {
		const items = products(8, 2_000);
		photos.delete('/p/1.jpg');
		for (let n = 2; n < 8; n++) slowPaths.add(`/p/${n}.jpg`);

		const run = await runNode({
			node,
			parameters: byUrl({ photosAtOnce: 4 }),
			items,
			credentials: credentials(),
		});

		expect(run.error?.message).toContain('item 1');
		// Item 0's photo first, alone; then 4 at once: item 1's and items 2 to 4 (5 when its request
		// goes out before the run ends).
		expect(slowRequests.length).toBeGreaterThanOrEqual(3);
		expect(await Promise.all(slowRequests)).toEqual(slowRequests.map(() => 'closed unanswered'));
	});

	it('closes the requests of the photos on their way when the execution is cancelled', async () => {
		const items = products(8, 2_000);
		for (let n = 1; n < 8; n++) slowPaths.add(`/p/${n}.jpg`);
		const stop = new AbortController();
		const cancelWhenFourWait = setInterval(() => {
			if (slowRequests.length === 4) stop.abort();
		}, 10);

		const run = await runNode({
			node,
			parameters: byUrl({ photosAtOnce: 4 }),
			items,
			credentials: credentials(),
			abortSignal: stop.signal,
		});
		clearInterval(cancelWhenFourWait);

		expect(run.output[0] ?? []).toEqual([]);
		expect(slowRequests).toHaveLength(4);
		expect(await Promise.all(slowRequests)).toEqual(slowRequests.map(() => 'closed unanswered'));
		expect(emulator.stats().uploads).toBe(0);
	});
});

describe('Image Upload by Photo URL: the photos of an item that fails', () => {
	/** The run's photos for `count` items, and their settings, as Image Upload reads them. */
	function runImages(count: number, size: number) {
		const items = products(count, size);
		const context = createContext({ credentials: credentials(), nodeParameters: byUrl(), items });
		const parameters = new RunParameters(context);
		const images = new RunImages(
			context,
			parameters,
			count,
			{ hasAnswer: () => false },
			{ waitingBytes: 0 },
		);
		// Called before the fetch starts: settles once no photo is on its way any more.
		const arrived = async () =>
			await new Promise<void>((resolve) => {
				const poll = setInterval(() => {
					if (images.fetching > 0) return;
					clearInterval(poll);
					resolve();
				}, 5);
			});
		const settings = (itemIndex: number) => uploadSettings(context, parameters, itemIndex);
		return { images, settings, arrived };
	}

	it('counts off at once the bytes fetched ahead for an item that fails before its turn', async () => {
		const { images, settings, arrived } = runImages(2, 2_000);
		const arrival = arrived();
		images.fetchAhead(settings(1));
		await arrival;
		expect(images.hasRoom(3_999)).toBe(false);

		images.forget(1);

		// The next photo is asked for in the same turn: no room is held for an item that failed.
		expect(images.hasRoom(3_999)).toBe(true);
		images.end();
	});

	it('lets go the bytes of a photo whose item fails before it is queued', async () => {
		const { images, settings } = runImages(2, 2_000);
		const taken = await images.of(settings(0));
		if (!('images' in taken)) throw new Error('expected the photo, fetched');
		expect(taken.images[0].data).toHaveLength(2_000);

		images.forget(0);

		expect(taken.images[0].data).toBeUndefined();
		images.end();
	});
});
