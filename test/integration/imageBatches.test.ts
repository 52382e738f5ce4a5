import { createHash, randomBytes } from 'node:crypto';

import type { IBinaryKeyData, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import {
	binaryItem,
	NODE_NAME,
	runNode,
	setBinaryDataMode,
	type RunNodeResult,
} from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { postControl } from '../helpers/service';

jest.setTimeout(60_000);

const node = new ProductDataIntegration();
const { emulator, credentials } = useEmulator(FAST_BUCKET);

function md5(data: Buffer): string {
	return createHash('md5').update(data).digest('hex');
}

/** An item with one image per binary field, each `size` random bytes (so never known before). */
async function item(
	fields: string[],
	size = 2048,
): Promise<{ item: INodeExecutionData; files: Buffer[] }> {
	const binary: IBinaryKeyData = {};
	const files: Buffer[] = [];
	for (const field of fields) {
		const data = randomBytes(size);
		files.push(data);
		binary[field] = (await binaryItem(data, `${field}.jpg`, 'image/jpeg')).binary!.data;
	}
	return { item: { json: {}, binary }, files };
}

async function items(count: number, fields = ['data', 'back'], size = 2048) {
	const made = await Promise.all(
		Array.from({ length: count }, async () => await item(fields, size)),
	);
	return { items: made.map((m) => m.item), files: made.map((m) => m.files) };
}

function upload(options: INodeParameters = {}, binaryProperties = 'data, back'): INodeParameters {
	return { resource: 'image', operation: 'upload', imagesFrom: 'named', binaryProperties, options };
}

function posts(): number {
	return emulator.stats().requests['POST /api/images'] ?? 0;
}

function allRequests(): number {
	return Object.values(emulator.stats().requests).reduce((sum, n) => sum + n, 0);
}

function hashcodeOf(data: Buffer): string | undefined {
	return emulator.images().find((record) => record.md5 === md5(data))?.hashcode;
}

/** [item, md5, hashcode] of every output item, to compare with what each input item holds. */
function outputImages(result: RunNodeResult) {
	return result.output[0].map(({ json, pairedItem }) => [
		(pairedItem as { item: number }).item,
		json.md5,
		json.hashcode,
	]);
}

function expectedImages(files: Buffer[][]) {
	return files.flatMap((itemFiles, index) =>
		itemFiles.map((data) => [index, md5(data), hashcodeOf(data)]),
	);
}

function hintsOf(result: RunNodeResult): string[] {
	return (result.run.data.resultData.runData[NODE_NAME]?.at(-1)?.hints ?? []).map(
		(hint) => hint.message,
	);
}

beforeAll(async () => {
	await setBinaryDataMode('filesystem');
});

beforeEach(async () => {
	await postControl(emulator.url, 'limits', { maxImageRequestBytes: 0, maxImagesPerRequest: 0 });
});

describe('Image Upload in batches', () => {
	it('packs the images of consecutive items into requests of at most Images Per Request, keeping items whole', async () => {
		const { items: input, files } = await items(5);

		const result = await runNode({
			node,
			parameters: upload({ imagesPerRequest: 4 }),
			items: input,
			credentials: credentials(),
		});

		expect(result.error).toBeUndefined();
		// Two items (four images) per request.
		expect(posts()).toBe(3);
		expect(emulator.stats().images).toBe(10);
		expect(outputImages(result)).toEqual(expectedImages(files));
	});

	it('splits a request refused as too large, and keeps the rest of the run below it', async () => {
		await postControl(emulator.url, 'limits', { maxImagesPerRequest: 3 });
		const { items: input, files } = await items(6);

		const result = await runNode({
			node,
			parameters: upload({ imagesPerRequest: 10 }),
			items: input,
			credentials: credentials(),
		});

		expect(result.error).toBeUndefined();
		// 10 images refused, then 5 refused, then 3 + 2 + 3 + 2, then the last item's 2.
		expect(emulator.stats().rejected413).toBe(2);
		expect(posts()).toBe(7);
		expect(emulator.stats().images).toBe(12);
		expect(outputImages(result)).toEqual(expectedImages(files));
	});

	it('splits by size too, and fails alone an item whose image is refused on its own', async () => {
		await postControl(emulator.url, 'limits', { maxImageRequestBytes: 6000 });
		const small = await item(['data'], 1000);
		const large = await item(['data'], 8000);
		const last = await item(['data'], 1000);

		const result = await runNode({
			node,
			parameters: upload({}, 'data'),
			items: [small.item, large.item, last.item],
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.error).toBeUndefined();
		expect(result.output[0].map(({ pairedItem }) => pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
		]);
		expect(result.output[0][0].json.hashcode).toBe(hashcodeOf(small.files[0]));
		expect(result.output[0][1].json.error).toBe(
			'The service refused the image in binary field "data" of item 1 as too large (413)',
		);
		expect(result.output[0][2].json.hashcode).toBe(hashcodeOf(last.files[0]));
		expect(emulator.stats().images).toBe(2);
	});

	it('keeps the hashcodes of the images of an item that arrived when another of its images is refused', async () => {
		await postControl(emulator.url, 'limits', { maxImageRequestBytes: 6000 });
		const small = randomBytes(1000);
		const large = randomBytes(8000);
		const mixed: INodeExecutionData = {
			json: {},
			binary: {
				data: (await binaryItem(small, 'data.jpg', 'image/jpeg')).binary!.data,
				back: (await binaryItem(large, 'back.jpg', 'image/jpeg')).binary!.data,
			},
		};

		const result = await runNode({
			node,
			parameters: upload({ imagesPerRequest: 1 }),
			items: [mixed],
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.output[0]).toHaveLength(1);
		expect(result.output[0][0].json.error).toMatch(
			/binary field "back" of item 0 as too large \(413\)/,
		);
		expect(result.output[0][0].json.uploaded).toEqual([
			expect.objectContaining({ binaryProperty: 'data', hashcode: hashcodeOf(small) }),
		]);
	});

	it('fails alone an item whose stored image cannot be read, before any request carries it', async () => {
		const good = await items(2);
		const broken = await item(['data', 'back']);
		broken.item.binary!.back = {
			...broken.item.binary!.back,
			id: 'filesystem-v2:workflows/none/executions/none/binary_data/missing',
		};
		const input = [good.items[0], broken.item, good.items[1]];

		const result = await runNode({
			node,
			parameters: upload(),
			items: input,
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.error).toBeUndefined();
		expect(posts()).toBe(1);
		expect(result.output[0].map(({ pairedItem }) => pairedItem)).toEqual([
			{ item: 0 },
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
			{ item: 2 },
		]);
		expect(result.output[0][2].json.error).toEqual(expect.any(String));
		expect(emulator.stats().images).toBe(4);

		emulator.reset();
		const stopped = await runNode({
			node,
			parameters: upload(),
			items: input,
			credentials: credentials(),
		});
		expect(stopped.error).toBeDefined();
		// The run stops at the broken item: the first item's images, still waiting, are not sent.
		expect(posts()).toBe(0);
	});

	it('fails every item of a request whose answer was lost, saying the service may have them', async () => {
		const { items: input } = await items(2);
		await postControl(emulator.url, 'faults', { count: 1, kind: '500', path: '/api/images' });

		const result = await runNode({
			node,
			parameters: upload(),
			items: input,
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.error).toBeUndefined();
		expect(posts()).toBe(1);
		expect(result.output[0]).toEqual([
			{
				json: expect.objectContaining({
					error: expect.stringMatching(/may or may not have received it/),
				}),
				pairedItem: { item: 0 },
			},
			{
				json: expect.objectContaining({
					error: expect.stringMatching(/may or may not have received it/),
				}),
				pairedItem: { item: 1 },
			},
		]);
	});

	it('Retry On Fail sends again only what did not reach the service', async () => {
		await postControl(emulator.url, 'limits', { maxImageRequestBytes: 6000 });
		const small = await item(['data'], 1000);
		const large = await item(['data'], 8000);

		const result = await runNode({
			node,
			parameters: upload({ imagesPerRequest: 1, rememberKnownImages: false }, 'data'),
			items: [small.item, large.item],
			credentials: credentials(),
			retryOnFail: { maxTries: 3 },
		});

		expect(result.error?.message).toMatch(/too large/);
		// The first item's image once; the refused one on each of the three tries.
		expect(posts()).toBe(4);
		expect(emulator.stats().images).toBe(1);
	});
});

const forget = async () =>
	await runNode({
		node,
		parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
		credentials: credentials(),
	});

describe('Known images', () => {
	beforeEach(async () => {
		await forget();
	});

	it('answers known images without a request, and uploads only the changed ones', async () => {
		const { items: input, files } = await items(3);
		const first = await runNode({
			node,
			parameters: upload(),
			items: input,
			credentials: credentials(),
		});
		expect(first.error).toBeUndefined();
		expect(posts()).toBe(1);
		expect(hintsOf(first)).toEqual([
			expect.stringMatching(/^Known images are remembered in this n8n process only/),
		]);

		emulator.reset();
		const again = await runNode({
			node,
			parameters: upload(),
			items: input,
			credentials: credentials(),
		});
		expect(again.error).toBeUndefined();
		expect(allRequests()).toBe(0);
		expect(again.output[0].map(({ json }) => json.known)).toEqual([
			true,
			true,
			true,
			true,
			true,
			true,
		]);
		expect(outputImages(again)).toEqual(outputImages(first));

		const changed = await item(['data', 'back']);
		const next = await runNode({
			node,
			parameters: upload(),
			items: [input[0], changed.item, input[2]],
			credentials: credentials(),
		});
		expect(next.error).toBeUndefined();
		expect(posts()).toBe(1);
		expect(emulator.stats().images).toBe(2);
		expect(next.output[0].map(({ json }) => json.known === true)).toEqual([
			true,
			true,
			false,
			false,
			true,
			true,
		]);
		expect(next.output[0][2].json.hashcode).toBe(hashcodeOf(changed.files[0]));
		expect(files).toHaveLength(3);
	});

	it('remembers what Skip Existing looked up, per customer node', async () => {
		const { items: input } = await items(1, ['data']);
		await runNode({
			node,
			parameters: upload({ rememberKnownImages: false }, 'data'),
			items: input,
			credentials: credentials(),
		});

		const southern = { customer: { __rl: true, mode: 'serviceId', value: '1002' } };
		const looked = await runNode({
			node,
			parameters: upload({ skipExisting: true }, 'data'),
			items: input,
			credentials: credentials(),
		});
		const again = await runNode({
			node,
			parameters: upload({ skipExisting: true }, 'data'),
			items: input,
			credentials: credentials(),
		});
		const otherCustomer = await runNode({
			node,
			parameters: upload({ skipExisting: true, ...southern }, 'data'),
			items: input,
			credentials: credentials(),
		});

		expect(looked.output[0][0].json).toMatchObject({ skipped: true });
		expect(again.output[0][0].json).toMatchObject({
			skipped: true,
			known: true,
			hashcode: looked.output[0][0].json.hashcode,
		});
		expect(otherCustomer.output[0][0].json.known).toBeUndefined();
		expect(emulator.stats().requests['GET /api/images']).toBe(2);
		expect(posts()).toBe(1);
	});

	it('forgets the images of the account and customer node on Forget Known Images', async () => {
		const { items: input } = await items(2);
		await runNode({ node, parameters: upload(), items: input, credentials: credentials() });

		const forgotten = await forget();
		expect(forgotten.output[0][0].json).toEqual({ forgotten: 4, sharedMemory: false });

		emulator.reset();
		await runNode({ node, parameters: upload(), items: input, credentials: credentials() });
		expect(posts()).toBe(1);
	});
});
