import { createHash, randomBytes } from 'node:crypto';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { binaryItem, runNode, setBinaryDataMode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, fastCredentials, useEmulator } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';
import { postControl } from '../helpers/service';

jest.setTimeout(60_000);

const node = new ProductDataIntegration();
const { emulator, credentials } = useEmulator(FAST_BUCKET);

function md5(data: Buffer): string {
	return createHash('md5').update(data).digest('hex');
}

/** The first bytes of a JPEG, then random ones: an image the service reads, never known before. */
function jpeg(size = 1000): Buffer {
	return Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(size)]);
}

/** A file the service refuses as not an image. */
function notAnImage(): Buffer {
	return Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(500)]);
}

async function imageItem(
	files: Record<string, Buffer>,
	json: INodeExecutionData['json'] = {},
): Promise<INodeExecutionData> {
	const item: INodeExecutionData = { json, binary: {} };
	for (const [field, data] of Object.entries(files))
		item.binary![field] = (await binaryItem(data, `${field}.jpg`, 'image/jpeg')).binary!.data;
	return item;
}

function upload(options: INodeParameters = {}, binaryProperties = 'data'): INodeParameters {
	return { resource: 'image', operation: 'upload', imagesFrom: 'named', binaryProperties, options };
}

/** Image Upload of `items` with `options`, a failing item beside the others (Continue On Fail). */
async function uploadEach(
	items: INodeExecutionData[],
	options: INodeParameters = {},
	binaryProperties = 'data',
) {
	return await runNode({
		node,
		parameters: upload(options, binaryProperties),
		items,
		credentials: credentials(),
		continueOnFail: true,
	});
}

function posts(): number {
	return emulator.stats().requests['POST /api/images'] ?? 0;
}

function lookups(): number {
	return emulator.stats().requests['GET /api/images'] ?? 0;
}

function hashcodeOf(data: Buffer): string | undefined {
	return emulator.images().find((record) => record.md5 === md5(data))?.hashcode;
}

async function forgetKnownImages(): Promise<void> {
	await runNode({
		node,
		parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
		credentials: credentials(),
	});
}

beforeAll(async () => {
	await setBinaryDataMode('filesystem');
});

beforeEach(async () => {
	await postControl(emulator.url, 'limits', {
		maxImageRequestBytes: 0,
		maxImagesPerRequest: 0,
		onlyImages: true,
	});
	await forgetKnownImages();
	emulator.reset();
});

describe('One bad image fails only its own item', () => {
	it('narrows a request refused as invalid down to the part that is not an image; the others keep their hashcodes and are remembered', async () => {
		const files = Array.from({ length: 8 }, (_, n) => (n === 5 ? notAnImage() : jpeg()));
		const input = await Promise.all(files.map(async (data) => await imageItem({ data })));

		const result = await uploadEach(input);

		expect(result.error).toBeUndefined();
		// 8 refused; 0-3 stored, 4-7 refused; 4-5 refused, 6-7 stored; 4 stored, 5 refused alone.
		expect(posts()).toBe(7);
		expect(emulator.stats().images).toBe(7);
		expect(result.output[0].map(({ json, pairedItem }) => [pairedItem, json.hashcode])).toEqual(
			files.map((data, item) => [{ item }, item === 5 ? undefined : hashcodeOf(data)]),
		);
		expect(result.output[0][5].json.error).toBe(
			'The service refused the image in binary field "data" of item 5 as invalid (400)',
		);
		expect(result.output[0][5].json.errorDetails).toMatch(/The request is invalid\./);

		emulator.reset();
		const again = await uploadEach(input);
		// Only the bad file is sent again, alone.
		expect(posts()).toBe(1);
		expect(again.output[0].filter(({ json }) => json.known === true)).toHaveLength(7);
	});

	it('spends no more narrowing when every image of a refused request is refused alone too', async () => {
		const input = await Promise.all(
			Array.from({ length: 12 }, async () => await imageItem({ data: notAnImage() })),
		);

		const result = await uploadEach(input, { imagesPerRequest: 4 });

		expect(result.output[0]).toHaveLength(12);
		expect(result.output[0].every(({ json }) => typeof json.error === 'string')).toBe(true);
		// The first request of 4 is narrowed (1 + 2 + 4); the two later ones are refused whole.
		expect(posts()).toBe(9);
		expect(result.output[0][11].json.error).toBe(
			'The service refused the request holding the image in binary field "data" of item 11 as invalid (400)',
		);
	});

	it('narrows a refused request of 50 with at most 14 more requests when the request itself is at fault', async () => {
		const input = await Promise.all(
			Array.from({ length: 60 }, async () => await imageItem({ data: notAnImage() })),
		);

		const result = await uploadEach(input);

		expect(result.output[0]).toHaveLength(60);
		expect(result.output[0].every(({ json }) => typeof json.error === 'string')).toBe(true);
		// 1 + 14 for the first request of 50, instead of 99 to refuse each image alone; the request of
		// the last 10 is refused whole.
		expect(posts()).toBe(16);
		expect(emulator.stats().images).toBe(0);
		const notNarrowed = result.output[0].find(({ json }) =>
			String(json.errorDetails).includes('stopped'),
		);
		expect(notNarrowed?.json.error).toMatch(
			/^The service refused the request holding the image in binary field "data" of item \d+ as invalid \(400\)$/,
		);
		expect(notNarrowed?.json.errorDetails).toMatch(
			/The request is invalid\. Nothing was stored\. Narrowing the refused request of 50 images down stopped after 14 more requests/,
		);
	});

	it('narrows a request of 50 down to its one bad image within the bound', async () => {
		const files = Array.from({ length: 50 }, (_, n) => (n === 0 ? notAnImage() : jpeg()));
		const input = await Promise.all(files.map(async (data) => await imageItem({ data })));

		const result = await uploadEach(input);

		// 50, then 25 + 25, 13 + 12, 7 + 6, 4 + 3, 2 + 2, 1 + 1: the deepest path there is.
		expect(posts()).toBe(13);
		expect(emulator.stats().images).toBe(49);
		expect(result.output[0][0].json.error).toBe(
			'The service refused the image in binary field "data" of item 0 as invalid (400)',
		);
		expect(result.output[0].slice(1).every(({ json }) => typeof json.hashcode === 'string')).toBe(
			true,
		);
	});

	it('fails only the item whose entry in the answer holds no usable hashcode; the next run sends only that one', async () => {
		const files = Array.from({ length: 10 }, () => jpeg());
		const input = await Promise.all(files.map(async (data) => await imageItem({ data })));
		await postControl(emulator.url, 'faults', {
			count: 1,
			kind: 'hostile-entry',
			path: '/api/images',
			entry: 3,
			value: '<html><body>Stored</body></html>',
		});

		const result = await uploadEach(input);

		expect(posts()).toBe(1);
		expect(result.output[0].map(({ json }) => json.hashcode)).toEqual(
			files.map((data, n) => (n === 3 ? undefined : hashcodeOf(data))),
		);
		expect(result.output[0][3].json.error).toBe(
			'The service answered the image in binary field "data" of item 3 without a usable hashcode',
		);
		expect(result.output[0][3].json.errorDetails).toMatch(/<html><body>Stored/);
		const hashcodes = files.map(hashcodeOf);

		emulator.reset();
		const again = await runNode({
			node,
			parameters: upload(),
			items: input,
			credentials: credentials(),
		});
		expect(posts()).toBe(1);
		expect(emulator.stats().images).toBe(1);
		expect(again.output[0].map(({ json }) => json.hashcode)).toEqual(hashcodes);
	});

	it('names the item and the field of a binary that cannot be read, and sends the others once', async () => {
		const good = [
			await imageItem({ data: jpeg(), back: jpeg() }),
			await imageItem({ data: jpeg(), back: jpeg() }),
		];
		const broken = await imageItem({ data: jpeg(), back: jpeg() });
		broken.binary!.back = {
			...broken.binary!.back,
			id: 'filesystem-v2:workflows/none/executions/none/binary_data/missing',
		};

		const result = await uploadEach([good[0], broken, good[1]], {}, 'data, back');

		expect(result.output[0][2]).toEqual({
			json: expect.objectContaining({
				error: 'The image in binary field "back" of item 1 cannot be read',
			}),
			pairedItem: { item: 1 },
		});
		expect(posts()).toBe(1);
		expect(emulator.stats().images).toBe(4);
	});

	it('lists the hashcodes already uploaded in the error that stops the run', async () => {
		const first = jpeg();
		const second = jpeg();

		const result = await runNode({
			node,
			parameters: upload(),
			items: [
				await imageItem({ data: first }),
				await imageItem({ data: notAnImage() }),
				await imageItem({ data: second }),
			],
			credentials: credentials(),
		});

		expect(result.error?.message).toBe(
			'The service refused the image in binary field "data" of item 1 as invalid (400)',
		);
		expect(result.error?.description).toContain(
			`Already uploaded or looked up in this run (input item, binary field -> hashcode): 0 data (MD5 ${md5(first)}) -> ${hashcodeOf(first)}; 2 data (MD5 ${md5(second)}) -> ${hashcodeOf(second)}`,
		);
	});

	it('reads the request limits per item: items with other limits go in requests of their own', async () => {
		const input = await Promise.all(
			[1, 1, 10, 10, 10, 10].map(
				async (perRequest) => await imageItem({ data: jpeg() }, { perRequest }),
			),
		);

		const result = await runNode({
			node,
			parameters: upload({ imagesPerRequest: '={{ $json.perRequest }}' }),
			items: input,
			credentials: credentials(),
		});

		expect(result.error).toBeUndefined();
		// Items 0 and 1 one a request, items 2-5 together.
		expect(posts()).toBe(3);
	});

	it('refuses an item whose request limit is not a number of at least 1, naming the item and the field, before any request', async () => {
		const result = await runNode({
			node,
			parameters: upload({ imagesPerRequest: '={{ $json.perRequest }}' }),
			items: [
				await imageItem({ data: jpeg() }, { perRequest: 5 }),
				await imageItem({ data: jpeg() }, { perRequest: 0 }),
			],
			credentials: credentials(),
		});

		expect(result.error?.message).toBe(
			'Images Per Request of item 1 must be a number of at least 1, not 0',
		);
		expect(posts()).toBe(0);
	});

	it('remembers the images of an item only when its own Remember Known Images says so', async () => {
		const remembered = jpeg();
		const forgotten = jpeg();
		const input = [
			await imageItem({ data: remembered }, { remember: true }),
			await imageItem({ data: forgotten }, { remember: false }),
		];
		await runNode({
			node,
			parameters: upload({ rememberKnownImages: '={{ $json.remember }}' }),
			items: input,
			credentials: credentials(),
		});
		expect(posts()).toBe(1);

		emulator.reset();
		const again = await runNode({
			node,
			parameters: upload(),
			items: input,
			credentials: credentials(),
		});
		expect(posts()).toBe(1);
		expect(emulator.stats().images).toBe(1);
		expect(again.output[0].map(({ json }) => json.known === true)).toEqual([true, false]);
	});
});

describe('One image, one upload per run', () => {
	it('sends an image shared by several items once; every item gets its hashcode, paired with it', async () => {
		const shared = jpeg();
		const own = [jpeg(), jpeg(), jpeg()];
		const files = [shared, own[0], shared, own[1], shared, own[2]];
		const input = await Promise.all(files.map(async (data) => await imageItem({ data })));

		const result = await runNode({
			node,
			parameters: upload({ imagesPerRequest: 1, rememberKnownImages: false }),
			items: input,
			credentials: credentials(),
		});

		expect(result.error).toBeUndefined();
		expect(posts()).toBe(4);
		expect(emulator.stats().images).toBe(4);
		expect(result.output[0].map(({ json, pairedItem }) => [pairedItem, json.hashcode])).toEqual(
			files.map((data, item) => [{ item }, hashcodeOf(data)]),
		);
	});

	it('sends the same image in two fields of one item and in the next item as one part', async () => {
		const shared = jpeg();
		const result = await runNode({
			node,
			parameters: upload({ rememberKnownImages: false }, 'data, back'),
			items: [
				await imageItem({ data: shared, back: shared }),
				await imageItem({ data: jpeg(), back: shared }),
			],
			credentials: credentials(),
		});

		expect(posts()).toBe(1);
		expect(emulator.stats().images).toBe(2);
		expect(result.output[0].map(({ json }) => [json.binaryProperty, json.hashcode])).toEqual([
			['data', hashcodeOf(shared)],
			['back', hashcodeOf(shared)],
			['data', expect.any(String)],
			['back', hashcodeOf(shared)],
		]);
	});

	it('looks a shared image up once with Skip Existing', async () => {
		const shared = jpeg();
		await runNode({
			node,
			parameters: upload({ rememberKnownImages: false }),
			items: [await imageItem({ data: shared })],
			credentials: credentials(),
		});
		expect(posts()).toBe(1);

		const result = await runNode({
			node,
			parameters: upload({ rememberKnownImages: false, skipExisting: true }),
			items: await Promise.all([1, 2, 3].map(async () => await imageItem({ data: shared }))),
			credentials: credentials(),
		});

		expect(lookups()).toBe(1);
		expect(posts()).toBe(1);
		expect(result.output[0].map(({ json }) => [json.hashcode, json.skipped])).toEqual([
			[hashcodeOf(shared), true],
			[hashcodeOf(shared), true],
			[hashcodeOf(shared), true],
		]);
	});
});

describe('Known images the workflow brings (Known MD5, Known Hashcode)', () => {
	const fromItem = {
		knownMd5: '={{ $json.knownMd5 }}',
		knownHashcode: '={{ $json.knownHashcode }}',
	};

	it('answers an image the item knows without a request, after the process forgot everything', async () => {
		const files = [jpeg(), jpeg(), jpeg()];
		const first = await runNode({
			node,
			parameters: upload(),
			items: await Promise.all(files.map(async (data) => await imageItem({ data }))),
			credentials: credentials(),
		});
		expect(posts()).toBe(1);
		const stored = first.output[0].map(({ json }) => ({
			knownMd5: json.md5,
			knownHashcode: json.hashcode,
		}));

		// What a restart without Redis leaves: no known image in the process.
		await forgetKnownImages();
		emulator.reset();
		const changed = jpeg();
		const again = await runNode({
			node,
			parameters: upload(fromItem),
			items: await Promise.all(
				[files[0], changed, files[2]].map(async (data, n) => await imageItem({ data }, stored[n])),
			),
			credentials: credentials(),
		});

		expect(again.error).toBeUndefined();
		// Only the changed photo is sent.
		expect(posts()).toBe(1);
		expect(emulator.stats().images).toBe(1);
		expect(again.output[0].map(({ json }) => [json.known, json.md5, json.hashcode])).toEqual([
			['item', md5(files[0]), stored[0].knownHashcode],
			[undefined, md5(changed), hashcodeOf(changed)],
			['item', md5(files[2]), stored[2].knownHashcode],
		]);
	});

	it.each([
		[
			{ knownMd5: 'a'.repeat(32), knownHashcode: '' },
			'Known MD5 is given without Known Hashcode in item 1',
		],
		[{ knownMd5: '', knownHashcode: 'h1' }, 'Known Hashcode is given without Known MD5 in item 1'],
		[
			{ knownMd5: 'not-an-md5', knownHashcode: 'h1' },
			'Known MD5 is not an MD5 (32 hex digits): "not-an-md5" in item 1',
		],
		[
			{ knownMd5: 'a'.repeat(32), knownHashcode: 'x/../../auth/me' },
			'Known Hashcode is not an image hashcode: "x/../../auth/me" in item 1',
		],
	])('refuses %j before any request, naming the item and the field', async (given, message) => {
		const result = await runNode({
			node,
			parameters: upload(fromItem),
			items: [
				await imageItem({ data: jpeg() }, { knownMd5: '', knownHashcode: '' }),
				await imageItem({ data: jpeg() }, given),
			],
			credentials: credentials(),
		});
		expect(result.error?.message).toBe(message);
		expect(posts()).toBe(0);
	});
});

/** A stand-in service whose lookup of one image fails every try, for a failure in the middle of an item. */
describe('An item whose lookup fails part way', () => {
	let server: LocalServer;
	let failingMd5 = '';
	const uploadedParts: string[] = [];

	beforeAll(async () => {
		server = await listenLocal((req, res) => {
			const chunks: Buffer[] = [];
			req.on('data', (chunk: Buffer) => chunks.push(chunk));
			req.on('end', () => {
				const url = new URL(req.url ?? '/', server.url);
				if (req.method === 'GET' && url.searchParams.get('md5') === failingMd5) {
					res.writeHead(500, { 'content-type': 'text/plain' });
					res.end('Internal error');
				} else if (req.method === 'GET') {
					res.writeHead(404, { 'content-type': 'text/plain' });
					res.end('Not found');
				} else {
					const parts = Buffer.concat(chunks).toString('latin1').split('filename=').length - 1;
					const hashcodes = Array.from({ length: parts }, () => `h${uploadedParts.push('part')}`);
					res.writeHead(200, { 'content-type': 'application/json' });
					res.end(JSON.stringify(hashcodes));
				}
			});
		});
	});

	afterAll(async () => {
		await server.close();
	});

	it('leaves no later item waiting for an image of the failed item: it is uploaded for that item', async () => {
		const shared = jpeg();
		const failing = jpeg();
		failingMd5 = md5(failing);

		const result = await runNode({
			node,
			parameters: upload({ skipExisting: true, rememberKnownImages: false }, 'data, back'),
			items: [
				await imageItem({ data: shared, back: failing }),
				await imageItem({ data: shared, back: jpeg() }),
			],
			credentials: fastCredentials(server),
			continueOnFail: true,
		});

		expect(result.error).toBeUndefined();
		expect(result.output[0]).toHaveLength(3);
		expect(result.output[0][0].pairedItem).toEqual({ item: 0 });
		expect(result.output[0][0].json.error).toEqual(expect.any(String));
		// Both images of the second item reach the service, in one request.
		expect(uploadedParts).toHaveLength(2);
		expect(result.output[0].slice(1).map(({ json, pairedItem }) => [pairedItem, json])).toEqual([
			[{ item: 1 }, expect.objectContaining({ md5: md5(shared), hashcode: 'h1', skipped: false })],
			[{ item: 1 }, expect.objectContaining({ hashcode: 'h2', skipped: false })],
		]);
	});
});
