import { randomUUID } from 'node:crypto';

import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { EDITION } from '../../nodes/edition/edition';
import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { useEdition, type TakeLease } from '../../nodes/shared/ports';
import { DEFAULT_ACCOUNT } from '../../scripts/emulator';
import { deduplicator, runNode } from '../../scripts/n8n/in-process';
import { HarnessDeduplicator } from '../../scripts/n8n/in-process/deduplication';
import { asItems, onlyChangedFromItems } from '../helpers/changedProducts';
import { FAST_BUCKET, fastCredentials, requestsSpent, useEmulator } from '../helpers/emulator';
import { postControl } from '../helpers/service';
import { takeUploadedSkus } from '../helpers/uploads';

// Where runs take their lease across processes (queue mode's Redis): none unless a test stubs one.
let mockTakeLease: TakeLease | undefined;
beforeAll(() => useEdition({ ...EDITION, takeLease: (request) => mockTakeLease?.(request) }));

const node = new ProductDataIntegration();

function catalogue(count: number, price = 10): IDataObject[] {
	return Array.from({ length: count }, (_, index) => ({
		sku: `P-${index}`,
		name: `Product ${index}`,
		price,
	}));
}

jest.setTimeout(30_000);

describe('Document Upload: Only Changed Products', () => {
	const { emulator } = useEmulator(FAST_BUCKET);
	let nodeId: string;
	const credentials = (overrides: IDataObject = {}) => fastCredentials(emulator, overrides);

	const requests = () => requestsSpent(emulator);

	async function run(
		items: INodeExecutionData[],
		parameters: INodeParameters = onlyChangedFromItems(),
		extra: IDataObject = {},
	) {
		return await runNode({ node, nodeId, parameters, items, credentials: credentials(), ...extra });
	}

	beforeEach(() => {
		nodeId = randomUUID();
	});

	afterEach(() => deduplicator.stopFailing());

	it('sends every product first, then nothing when nothing changed, then only what changed', async () => {
		const first = await run(asItems(catalogue(20)));
		expect(first.error).toBeUndefined();
		expect(await takeUploadedSkus(emulator)).toHaveLength(20);
		expect(first.output[0]).toHaveLength(20);
		expect(first.output[0][3]).toMatchObject({
			json: { product: 'P-3', sent: true, reason: 'changed', status: 'succeeded', confirmed: true },
			pairedItem: { item: 3 },
		});
		expect(first.output[0][0].json.run).toMatchObject({
			products: 20,
			sent: 20,
			unchanged: 0,
			sessions: 1,
			sessionsConfirmed: 1,
			sessionsUnconfirmed: 0,
		});

		const second = await run(asItems(catalogue(20)));
		expect(second.error).toBeUndefined();
		expect(requests()).toBe(0);
		expect(second.output[0][5]).toMatchObject({
			json: { product: 'P-5', sent: false, reason: 'unchanged' },
			pairedItem: { item: 5 },
		});
		expect(second.output[0][0].json.run).toMatchObject({
			products: 20,
			sent: 0,
			unchanged: 20,
			sessions: 0,
		});
		expect(String((second.output[0][0].json.run as IDataObject).message)).toMatch(
			/^Nothing to send: .* No request was made\.$/,
		);

		const changed = catalogue(20);
		changed[7].price = 11;
		changed[12].name = 'Renamed';
		const third = await run(asItems(changed));
		expect(third.error).toBeUndefined();
		// One upload and one status read.
		expect(requests()).toBe(2);
		expect(await takeUploadedSkus(emulator)).toEqual(['P-12', 'P-7']);
		expect(third.output[0][0].json.run).toMatchObject({ sent: 2, unchanged: 18 });
	});

	it('puts back exactly the products of a session that finished with errors', async () => {
		await postControl(emulator.url, 'failing', { texts: ['<sku>P-2</sku>'] });
		const first = await run(asItems(catalogue(6)), onlyChangedFromItems({ itemsPerDocument: 2 }));
		expect(first.error).toBeUndefined();
		expect(first.output[0][2].json).toMatchObject({
			product: 'P-2',
			status: 'failed',
			confirmed: false,
		});
		expect(first.output[0][3].json).toMatchObject({
			product: 'P-3',
			status: 'failed',
			confirmed: false,
		});
		expect(first.output[0][0].json.run).toMatchObject({
			sessions: 3,
			sessionsConfirmed: 2,
			sessionsFailed: 1,
		});
		await postControl(emulator.url, 'failing', { texts: [] });
		emulator.reset();

		const changed = catalogue(6);
		changed[5].price = 12;
		const second = await run(asItems(changed), onlyChangedFromItems({ itemsPerDocument: 2 }));
		expect(second.error).toBeUndefined();
		expect(await takeUploadedSkus(emulator)).toEqual(['P-2', 'P-3', 'P-5']);
		expect(second.output[0].map(({ json }) => json.reason)).toEqual([
			'unchanged',
			'unchanged',
			'sentAgainAfterFailure',
			'sentAgainAfterFailure',
			'unchanged',
			'changed',
		]);
		expect(second.output[0][0].json.run).toMatchObject({
			sent: 3,
			sentAgainAfterFailure: 2,
			unchanged: 3,
		});

		await run(asItems(changed), onlyChangedFromItems({ itemsPerDocument: 2 }));
		expect(requests()).toBe(0);
	});

	it('sends a product again whose content changed back to one the service confirmed before', async () => {
		await run(asItems(catalogue(3, 10)));
		await run(asItems(catalogue(3, 9)));
		emulator.reset();
		await run(asItems(catalogue(3, 10)));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2']);
	});

	it('confirms nothing the service has not finished: a session still processing at the timeout is sent again', async () => {
		const parameters = {
			resource: 'document',
			operation: 'upload',
			source: 'text',
			xml: '={{ $json.xml }}',
			onlyChangedProducts: true,
			productField: 'sku',
			options: { timeout: 0 },
		} as INodeParameters;
		const items = [
			{
				json: {
					sku: 'S-1',
					xml: '<Products><!--emulator:processing-ms=600000--><Product><sku>S-1</sku></Product></Products>',
				},
			},
		];
		const pending = await run(items, parameters);
		expect(pending.error).toBeUndefined();
		expect(pending.output[0][0].json).toMatchObject({
			product: 'S-1',
			sent: true,
			status: 'processing',
			confirmed: false,
		});
		expect(pending.output[0][0].json.run).toMatchObject({
			sessions: 1,
			sessionsConfirmed: 0,
			sessionsUnconfirmed: 1,
		});
		emulator.reset();

		await run(items, parameters);
		expect(emulator.stats().uploads).toBe(1);
	});

	it('leaves unconfirmed the products of a run that ends before their sessions are read', async () => {
		await postControl(emulator.url, 'faults', { count: 1, kind: 'hang', path: '/api/status' });
		const stop = new AbortController();
		setTimeout(() => stop.abort(), 500);
		const broken = await run(asItems(catalogue(3)), onlyChangedFromItems(), {
			abortSignal: stop.signal,
		});
		expect(emulator.stats().uploads).toBe(1);
		expect(broken.output[0] ?? []).toEqual([]);
		emulator.reset();

		await run(asItems(catalogue(3)));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2']);
	});

	it('answers only to the password: another password or another case of the username sees an empty memory', async () => {
		await run(asItems(catalogue(4)));
		emulator.reset();
		const owner = await run(asItems(catalogue(4)), onlyChangedFromItems({ validateOnly: true }));
		expect(owner.output[0][0].json.run).toMatchObject({ wouldSend: 0, unchanged: 4 });

		const shouting = await runNode({
			node,
			nodeId,
			parameters: onlyChangedFromItems({ validateOnly: true }),
			items: asItems(catalogue(4)),
			credentials: credentials({ username: DEFAULT_ACCOUNT.username.toUpperCase() }),
		});
		expect(shouting.output[0][0].json.run).toMatchObject({ wouldSend: 4, unchanged: 0 });

		const stranger = await runNode({
			node,
			nodeId,
			parameters: onlyChangedFromItems(),
			items: asItems(catalogue(4)),
			credentials: credentials({ password: 'not-the-password' }),
		});
		// Its memory is empty: it sends everything, which the service refuses.
		expect(stranger.error).toBeDefined();
		expect(emulator.stats().uploads).toBe(0);
		expect(emulator.stats().rejected401).toBeGreaterThan(0);
		emulator.reset();

		// Neither the other holders' checks nor the refused run changed the owner's memory.
		await run(asItems(catalogue(4)));
		expect(requests()).toBe(0);
	});

	it('Send All Products sends every product once, then remembers again', async () => {
		await run(asItems(catalogue(5)));
		emulator.reset();
		const all = await run(asItems(catalogue(5)), onlyChangedFromItems({ sendAllProducts: true }));
		expect(all.output[0][0].json.run).toMatchObject({ sent: 5, unchanged: 0 });
		expect(await takeUploadedSkus(emulator)).toHaveLength(5);
		await run(asItems(catalogue(5)));
		expect(requests()).toBe(0);
	});

	it('Validate Only sends nothing and says what a real run would send and spend, which the next real run sends', async () => {
		await run(asItems(catalogue(10)), onlyChangedFromItems({ itemsPerDocument: 4 }));
		emulator.reset();
		const changed = catalogue(10);
		for (const index of [1, 2, 8]) changed[index].price = 99;

		const validated = await run(
			asItems(changed),
			onlyChangedFromItems({ itemsPerDocument: 2, validateOnly: true }),
			{
				credentials: credentials({
					customRateLimit: true,
					bucketCapacity: 1,
					leakIntervalSeconds: 0.02,
				}),
			},
		);
		expect(validated.error).toBeUndefined();
		expect(requests()).toBe(0);
		expect(validated.output[0].map(({ json }) => json.wouldSend)).toEqual([
			false,
			true,
			true,
			false,
			false,
			false,
			false,
			false,
			true,
			false,
		]);
		// Two documents (P-1 and P-2, then P-8): two uploads and two status reads; 1 at once, then one per 0.02 s.
		expect(validated.output[0][0].json.run).toMatchObject({
			validateOnly: true,
			wouldSend: 3,
			unchanged: 7,
			documents: 2,
			requests: 4,
			bucketSeconds: 0.06,
		});

		await run(asItems(changed), onlyChangedFromItems({ itemsPerDocument: 2 }));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-1', 'P-2', 'P-8']);
	});

	it('one document per item: its digest is the document, its product a field of the item', async () => {
		const parameters = {
			resource: 'document',
			operation: 'upload',
			source: 'text',
			xml: '={{ $json.xml }}',
			onlyChangedProducts: true,
			productField: 'sku',
		} as INodeParameters;
		const documents = (price: number) =>
			catalogue(3).map((json) => ({
				json: {
					sku: json.sku,
					xml: `<Products><Product><sku>${String(json.sku)}</sku><price>${json.sku === 'P-1' ? price : 1}</price></Product></Products>`,
				},
			}));
		await run(documents(5), parameters);
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2']);
		const second = await run(documents(6), parameters);
		expect(await takeUploadedSkus(emulator)).toEqual(['P-1']);
		expect(second.output[0][1].json).toMatchObject({
			product: 'P-1',
			sent: true,
			reason: 'changed',
			confirmed: true,
		});
	});

	it('an upload that fails leaves its products unconfirmed: with Continue On Fail they say so, and go again next run', async () => {
		await run(asItems(catalogue(4)), onlyChangedFromItems({ itemsPerDocument: 2 }));
		emulator.reset();
		const changed = catalogue(4);
		for (const product of changed) product.price = 20;
		await postControl(emulator.url, 'faults', { count: 10, kind: '500', path: '/api/xml' });
		const broken = await run(asItems(changed), onlyChangedFromItems({ itemsPerDocument: 2 }), {
			continueOnFail: true,
		});
		expect(broken.error).toBeUndefined();
		expect(
			broken.output[0].every(({ json }) => json.sent === false && typeof json.error === 'string'),
		).toBe(true);
		expect(broken.output[0][0].json.run).toMatchObject({ sent: 0, sessions: 0 });
		emulator.reset();

		await run(asItems(changed), onlyChangedFromItems({ itemsPerDocument: 2 }));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2', 'P-3']);
	});

	/**
	 * A first run of the node, started and held in its wait for its session's status (in an object:
	 * an async function would wait for a promise it returns).
	 */
	async function runHeldInItsWait(): Promise<{ first: ReturnType<typeof run> }> {
		await postControl(emulator.url, 'faults', {
			count: 1,
			kind: 'slow',
			delayMs: 1500,
			path: '/api/status',
		});
		const first = run(asItems(catalogue(3)));
		await new Promise((resolve) => setTimeout(resolve, 500));
		return { first };
	}

	it('refuses a second run of the same node while the first is still syncing, sending nothing', async () => {
		const { first } = await runHeldInItsWait();
		const uploadsBefore = emulator.stats().uploads;
		const second = await run(asItems(catalogue(3)));
		expect(second.error?.message).toBe(
			'Another run of this node is still syncing its changed products',
		);
		expect(emulator.stats().uploads).toBe(uploadsBefore);
		expect((await first).error).toBeUndefined();
		emulator.reset();

		// Once it has finished, the node runs again: nothing changed, nothing sent.
		await run(asItems(catalogue(3)));
		expect(requests()).toBe(0);
	});

	it('under Continue On Fail, a run refused while another syncs gives an error item per input item', async () => {
		const { first } = await runHeldInItsWait();
		const uploadsBefore = emulator.stats().uploads;
		const second = await run(asItems(catalogue(3)), onlyChangedFromItems(), {
			continueOnFail: true,
		});
		expect(second.error).toBeUndefined();
		expect(second.output[0]).toHaveLength(3);
		expect(second.output[0].map(({ json }) => json.error)).toEqual([
			'Another run of this node is still syncing its changed products',
			'Another run of this node is still syncing its changed products',
			'Another run of this node is still syncing its changed products',
		]);
		expect(second.output[0].map(({ json }) => json.sku)).toEqual([undefined, undefined, undefined]);
		expect(second.output[0].map(({ pairedItem }) => pairedItem)).toEqual([
			{ item: 0 },
			{ item: 1 },
			{ item: 2 },
		]);
		expect(emulator.stats().uploads).toBe(uploadsBefore);
		expect((await first).error).toBeUndefined();
	});

	it('takes at most 250,000 products in one run: one more fails before anything is read or sent', async () => {
		const many = (count: number) =>
			Array.from({ length: count }, (_, index) => ({ json: { sku: index } }));
		const tooMany = await run(many(250_001));
		expect(tooMany.error?.message).toBe(
			'Only Changed Products remembers at most 250000 products per node; this run has 250001 items',
		);
		expect(Object.keys(deduplicator.sizes()).filter((key) => key.includes(nodeId))).toEqual([]);

		const atTheBound = await run(many(250_000), onlyChangedFromItems({ validateOnly: true }));
		expect(atTheBound.error).toBeUndefined();
		expect(atTheBound.output[0][0].json.run).toMatchObject({
			products: 250_000,
			wouldSend: 250_000,
		});
		expect(requests()).toBe(0);
	}, 180_000);

	describe('bad input fails before any request, naming the item and the field', () => {
		it.each([
			[
				'a missing product field',
				[{ sku: 'A' }, { name: 'no sku' }],
				/^Item 1 has no product field "sku" \(Product Field\)$/,
			],
			[
				'the same product twice',
				[{ sku: 'A' }, { sku: 'B' }, { sku: 'A' }],
				/^Item 2 names the same product as item 0 in the field "sku": "A"$/,
			],
			[
				'the same product twice, with a line break in it',
				[{ sku: 'A\r\nforged: line' }, { sku: 'A\r\nforged: line' }],
				/^Item 1 names the same product as item 0 in the field "sku": "A {2}forged: line"$/,
			],
			[
				'a product that is an object',
				[{ sku: { id: 1 } }],
				/^The product field "sku" of item 0 is a object, not a string or number$/,
			],
			[
				'a product that is a list',
				[{ sku: 'A' }, { sku: ['B'] }],
				/^The product field "sku" of item 1 is a list, not a string or number$/,
			],
			[
				'a product that is a boolean',
				[{ sku: true }],
				/^The product field "sku" of item 0 is a boolean, not a string or number$/,
			],
		])('%s', async (_, products, message) => {
			const { error } = await run(asItems(products as IDataObject[]));
			expect(error?.message).toMatch(message);
			expect(requests()).toBe(0);
			expect(Object.keys(deduplicator.sizes()).filter((key) => key.includes(nodeId))).toEqual([]);
		});

		it('with Continue On Fail, the bad item fails alone and the others are sent', async () => {
			const { output, error } = await run(
				asItems([{ sku: 'A' }, { name: 'x' }, { sku: 'A' }, { sku: 7 }]),
				onlyChangedFromItems(),
				{ continueOnFail: true },
			);
			expect(error).toBeUndefined();
			expect(output[0].map(({ json }) => json.error ?? json.reason)).toEqual([
				'changed',
				'Item 1 has no product field "sku" (Product Field)',
				'Item 2 names the same product as item 0 in the field "sku": "A"',
				'changed',
			]);
			expect(output[0].map(({ pairedItem }) => pairedItem)).toEqual([
				{ item: 0 },
				{ item: 1 },
				{ item: 2 },
				{ item: 3 },
			]);
			expect(await takeUploadedSkus(emulator)).toEqual(['7', 'A']);
		});
	});

	it('a store that fails after the check leaves nothing unconfirmed counted as synced', async () => {
		// P-0's session fails, so the next run looks up failed sessions after its check.
		await postControl(emulator.url, 'failing', { texts: ['<sku>P-0</sku>'] });
		await run(asItems(catalogue(4)), onlyChangedFromItems({ itemsPerDocument: 1 }));
		emulator.reset();
		const changed = catalogue(4);
		changed[1].price = 30;
		changed[3].price = 30;

		// The check of the confirmed contents succeeds; the look-up of failed sessions after it fails.
		deduplicator.failCalls('checkProcessedAndRecord', { after: 1 });
		const broken = await run(asItems(changed));
		expect(broken.error?.message).toMatch(/deduplication store failed/);
		expect(requests()).toBe(0);

		await run(asItems(changed));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-3']);
	});

	it('a check interrupted before the memory is put back makes the next run send everything, never less', async () => {
		// P-0's session fails, so the next run looks up failed sessions after its check.
		await postControl(emulator.url, 'failing', { texts: ['<sku>P-0</sku>'] });
		await run(asItems(catalogue(4)), onlyChangedFromItems({ itemsPerDocument: 1 }));
		emulator.reset();
		const changed = catalogue(4);
		changed[2].price = 30;

		// Every write after the first check fails, as when the process dies there.
		deduplicator.failCalls('checkProcessedAndRecord', { after: 1, times: Infinity });
		deduplicator.failCalls('removeProcessed', { times: Infinity });
		deduplicator.failCalls('clearAllProcessedItems', { times: Infinity });
		const broken = await run(asItems(changed));
		expect(broken.error).toBeDefined();
		expect(requests()).toBe(0);
		deduplicator.stopFailing();

		await run(asItems(changed));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2', 'P-3']);
		await run(asItems(changed));
		expect(requests()).toBe(0);
	});

	it("a night where products changed puts nothing back before its upload: n8n's removal, which scans the list per value, is not called", async () => {
		await run(asItems(catalogue(6)));
		emulator.reset();
		const changed = catalogue(6);
		for (const product of changed) product.price = 40;

		deduplicator.failCalls('removeProcessed', { times: Infinity });
		const night = await run(asItems(changed));
		expect(night.error).toBeUndefined();
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2', 'P-3', 'P-4', 'P-5']);
		deduplicator.stopFailing();

		await run(asItems(changed));
		expect(requests()).toBe(0);
	});

	it('a put-back cut short leaves the mark of the check, so the next run trusts none of it', async () => {
		// 2,000 products all changed: n8n's removal takes out what the check added in several slices.
		await run(asItems(catalogue(2_000)));
		emulator.reset();
		deduplicator.failCalls('removeProcessed', { after: 1 });
		const broken = await run(
			asItems(catalogue(2_000, 11)),
			onlyChangedFromItems({ validateOnly: true }),
		);
		expect(broken.error?.message).toMatch(/deduplication store failed/);
		deduplicator.stopFailing();

		const next = await run(asItems(catalogue(2_000, 11)));
		expect(next.output[0][0].json.run).toMatchObject({ sent: 2_000, unchanged: 0 });
	});

	it('Validate Only leaves the memory as it found it: a check of a few products forgets none of the others', async () => {
		await run(asItems(catalogue(10)));
		emulator.reset();
		const sizes = deduplicator.sizes();

		const sample = catalogue(3);
		sample[0].price = 50;
		const validated = await run(asItems(sample), onlyChangedFromItems({ validateOnly: true }));
		expect(validated.output[0][0].json.run).toMatchObject({ wouldSend: 1, unchanged: 2 });
		expect(deduplicator.sizes()).toEqual(sizes);

		await run(asItems(catalogue(10)));
		expect(requests()).toBe(0);
	});
});

describe('Document Upload: Only Changed Products, Output Unchanged Products off', () => {
	const { emulator } = useEmulator(FAST_BUCKET);
	let nodeId: string;

	const requests = () => requestsSpent(emulator);

	async function run(
		items: INodeExecutionData[],
		extra: IDataObject = {},
		options: { continueOnFail?: boolean } = {},
	) {
		return await runNode({
			node,
			nodeId,
			parameters: onlyChangedFromItems({ outputUnchangedProducts: false, ...extra }),
			items,
			credentials: fastCredentials(emulator),
			...options,
		});
	}

	beforeEach(async () => {
		nodeId = randomUUID();
		const first = await run(asItems(catalogue(100)));
		// The first night sends every product, so every product still gets its item.
		expect(first.output[0]).toHaveLength(100);
		await takeUploadedSkus(emulator);
		emulator.reset();
	});

	it('a quiet night outputs one item, paired with the first input item, carrying only the run', async () => {
		const quiet = await run(asItems(catalogue(100)));
		expect(quiet.error).toBeUndefined();
		expect(requests()).toBe(0);
		expect(quiet.output[0]).toHaveLength(1);
		expect(Object.keys(quiet.output[0][0].json)).toEqual(['run']);
		expect(quiet.output[0][0].pairedItem).toEqual({ item: 0 });
		expect(quiet.output[0][0].json.run).toMatchObject({
			products: 100,
			sent: 0,
			unchanged: 100,
			message:
				'Nothing to send: the service has confirmed all 100 products as they are now. No request was made.',
		});
	});

	it('a night where 1 % changed outputs only the product sent, carrying the run', async () => {
		const changed = catalogue(100);
		changed[42].price = 11;
		const night = await run(asItems(changed));
		expect(night.error).toBeUndefined();
		expect(await takeUploadedSkus(emulator)).toEqual(['P-42']);
		expect(night.output[0]).toHaveLength(1);
		expect(night.output[0][0]).toMatchObject({
			json: {
				product: 'P-42',
				sent: true,
				reason: 'changed',
				confirmed: true,
				run: { products: 100, sent: 1, unchanged: 99 },
			},
			pairedItem: { item: 42 },
		});
	});

	it('products sent again after a failure keep their items', async () => {
		await postControl(emulator.url, 'failing', { texts: ['<sku>P-7</sku>'] });
		const changed = catalogue(100);
		changed[7].price = 11;
		await run(asItems(changed));
		await postControl(emulator.url, 'failing', { texts: [] });
		await takeUploadedSkus(emulator);

		changed[90].price = 11;
		const night = await run(asItems(changed));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-7', 'P-90']);
		expect(
			night.output[0].map(({ json, pairedItem }) => [json.product, json.reason, pairedItem]),
		).toEqual([
			['P-7', 'sentAgainAfterFailure', { item: 7 }],
			['P-90', 'changed', { item: 90 }],
		]);
		expect(night.output[0][0].json.run).toMatchObject({
			sent: 2,
			sentAgainAfterFailure: 1,
			unchanged: 98,
		});
	});

	it('with Continue On Fail, an invalid item keeps its error item, which carries the run', async () => {
		const items = asItems(catalogue(100));
		items[3] = { json: { name: 'no sku' } };
		const night = await run(items, {}, { continueOnFail: true });
		expect(night.error).toBeUndefined();
		expect(requests()).toBe(0);
		expect(night.output[0]).toHaveLength(1);
		expect(night.output[0][0]).toMatchObject({
			json: {
				error: 'Item 3 has no product field "sku" (Product Field)',
				run: { products: 100, sent: 0, unchanged: 99, invalid: 1 },
			},
			pairedItem: { item: 3 },
		});
	});

	it('Validate Only outputs only the products a real run would send, or one item with the run', async () => {
		const quiet = await run(asItems(catalogue(100)), { validateOnly: true });
		expect(quiet.output[0]).toHaveLength(1);
		expect(Object.keys(quiet.output[0][0].json)).toEqual(['run']);
		expect(quiet.output[0][0].pairedItem).toEqual({ item: 0 });
		expect(quiet.output[0][0].json.run).toMatchObject({ validateOnly: true, wouldSend: 0 });

		const changed = catalogue(100);
		changed[5].price = 11;
		changed[50].price = 11;
		const validated = await run(asItems(changed), { validateOnly: true });
		expect(requests()).toBe(0);
		expect(
			validated.output[0].map(({ json, pairedItem }) => [json.product, json.wouldSend, pairedItem]),
		).toEqual([
			['P-5', true, { item: 5 }],
			['P-50', true, { item: 50 }],
		]);
		expect(validated.output[0][0].json.run).toMatchObject({ wouldSend: 2, unchanged: 98 });
	});
});

describe('Document Upload: Only Changed Products, the store called in slices', () => {
	const { emulator } = useEmulator(FAST_BUCKET);

	it("hands n8n's store at most 10,000 values a call, over a list at most twice the catalogue, so that no call holds the event loop for long", async () => {
		const store = new HarnessDeduplicator();
		const valuesPerCall: number[] = [];
		let longestList = 0;
		deduplicator.use({
			checkProcessedAndRecord: async (items, ...rest) => {
				valuesPerCall.push(items.length);
				const answer = await store.checkProcessedAndRecord(items, ...rest);
				longestList = Math.max(longestList, ...Object.values(store.sizes()));
				return answer;
			},
			removeProcessed: async (items, ...rest) => {
				valuesPerCall.push(items.length);
				await store.removeProcessed(items, ...rest);
			},
			clearAllProcessedItems: async (...args) => await store.clearAllProcessedItems(...args),
			getProcessedDataCount: async (...args) => await store.getProcessedDataCount(...args),
		});
		const nodeId = randomUUID();
		const night = async (price: number) =>
			await runNode({
				node,
				nodeId,
				parameters: onlyChangedFromItems(),
				items: asItems(catalogue(50_000, price)),
				credentials: fastCredentials(emulator),
			});

		expect((await night(10)).error).toBeUndefined();
		// The first night's check records the catalogue and two markers; the empty list held no failure.
		expect(longestList).toBe(50_002);
		longestList = 0;
		const everyProductChanged = await night(11);
		expect(everyProductChanged.error).toBeUndefined();
		expect(everyProductChanged.output[0][0].json.run).toMatchObject({ sent: 50_000 });
		// The catalogue and the marker that no session failed.
		expect(Object.values(store.sizes())).toEqual([50_001]);
		// The check records every new content, and no failed value: no session failed last night.
		expect(longestList).toBe(100_002);
		expect(valuesPerCall.length).toBeGreaterThan(0);
		expect(Math.max(...valuesPerCall)).toBeLessThanOrEqual(10_000);
	}, 120_000);
});

describe('Document Upload: Only Changed Products, a run that lost its hold on the node', () => {
	const { emulator } = useEmulator(FAST_BUCKET);

	afterEach(() => {
		mockTakeLease = undefined;
	});

	it('writes nothing to its memory once its lease is lost, and still hands on its sessions', async () => {
		const store = new HarnessDeduplicator();
		const lease = new AbortController();
		let callsAfterLoss = 0;
		const afterLoss = () => {
			if (lease.signal.aborted) callsAfterLoss++;
		};
		deduplicator.use({
			checkProcessedAndRecord: async (items, ...rest) => {
				afterLoss();
				const answer = await store.checkProcessedAndRecord(items, ...rest);
				// The lease runs out right after the run's check, while it uploads.
				if (mockTakeLease) lease.abort();
				return answer;
			},
			removeProcessed: async (items, ...rest) => {
				afterLoss();
				await store.removeProcessed(items, ...rest);
			},
			clearAllProcessedItems: async (...args) => {
				afterLoss();
				await store.clearAllProcessedItems(...args);
			},
			getProcessedDataCount: async (...args) => await store.getProcessedDataCount(...args),
		});
		const nodeId = randomUUID();
		const night = async (products: IDataObject[]) =>
			await runNode({
				node,
				nodeId,
				parameters: onlyChangedFromItems(),
				items: asItems(products),
				credentials: fastCredentials(emulator),
			});
		expect((await night(catalogue(6))).error).toBeUndefined();
		await takeUploadedSkus(emulator);

		const changed = catalogue(6);
		changed[1].price = 30;
		changed[3].price = 30;
		mockTakeLease = () => Promise.resolve({ lost: lease.signal, release: () => Promise.resolve() });
		const lostNight = await night(changed);
		mockTakeLease = undefined;
		expect(lostNight.error).toBeUndefined();
		expect(await takeUploadedSkus(emulator)).toEqual(['P-1', 'P-3']);
		expect(lostNight.output[0][1].json).toMatchObject({ product: 'P-1', sent: true });
		expect(lostNight.output[0][1].json.sessionId).toEqual(expect.any(String));
		expect(String((lostNight.output[0][0].json.run as IDataObject).memory)).toMatch(
			/^Not written: this run lost its hold on the node/,
		);
		expect(callsAfterLoss).toBe(0);
		// As found after the check: the 6 confirmed, the two markers and the 2 new contents.
		expect(Object.values(store.sizes())).toEqual([10]);

		// The marker left behind makes the next run trust none of it.
		expect((await night(changed)).error).toBeUndefined();
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2', 'P-3', 'P-4', 'P-5']);
		expect((await night(changed)).output[0][0].json.run).toMatchObject({ sent: 0, unchanged: 6 });
	});
});

describe('Document Upload: Only Changed Products, Count Missing Products', () => {
	const { emulator } = useEmulator(FAST_BUCKET);
	const store = new HarnessDeduplicator();
	/** The values each checkProcessedAndRecord call was handed. */
	let checked: number[] = [];
	let nodeId: string;

	beforeAll(() => {
		deduplicator.use({
			checkProcessedAndRecord: async (items, ...rest) => {
				checked.push(items.length);
				return await store.checkProcessedAndRecord(items, ...rest);
			},
			removeProcessed: async (...args) => await store.removeProcessed(...args),
			clearAllProcessedItems: async (...args) => await store.clearAllProcessedItems(...args),
			getProcessedDataCount: async (...args) => await store.getProcessedDataCount(...args),
		});
	});

	beforeEach(() => {
		nodeId = randomUUID();
		checked = [];
	});

	afterEach(() => deduplicator.stopFailing());

	const counting = (extra: IDataObject = {}) =>
		onlyChangedFromItems({ countMissingProducts: true, itemsPerDocument: 2, ...extra });

	async function run(
		products: IDataObject[],
		parameters: INodeParameters = counting(),
		extra: IDataObject = {},
	) {
		const result = await runNode({
			node,
			nodeId,
			parameters,
			items: asItems(products),
			credentials: fastCredentials(emulator),
			...extra,
		});
		expect(result.error).toBeUndefined();
		return result.output[0][0].json.run as IDataObject;
	}

	function listSize(): number | undefined {
		return Object.entries(store.sizes()).find(([key]) => key.endsWith(nodeId))?.[1];
	}

	it('counts the products the last run remembered that this one lacks: dropped, not changed, added or failed last time', async () => {
		await postControl(emulator.url, 'failing', { texts: ['<sku>P-2</sku>'] });
		const first = await run(catalogue(10));
		await postControl(emulator.url, 'failing', { texts: [] });
		expect(first).toMatchObject({ sent: 10, sessionsFailed: 1, missing: null });
		expect(String(first.missingNote)).toMatch(/^Not counted: the last run did not keep/);
		// P-2 and P-3 shared the failed session: 8 confirmed, 2 failed, each with its identity, and the marker.
		expect(listSize()).toBe(21);
		await takeUploadedSkus(emulator);

		// P-3 (failed last time) and P-9 are dropped, P-1 changed, P-10 added, P-2 goes again.
		const night = catalogue(11).filter(({ sku }) => sku !== 'P-3' && sku !== 'P-9');
		night[1].price = 11;
		checked = [];
		const second = await run(night);
		expect(await takeUploadedSkus(emulator)).toEqual(['P-1', 'P-10', 'P-2']);
		expect(second).toMatchObject({
			products: 9,
			sent: 3,
			unchanged: 6,
			sentAgainAfterFailure: 1,
			missing: 2,
		});
		expect(second.missingNote).toBeUndefined();
		// The check (3 markers and 9 contents), the identities of the 3 to send, then the failed
		// values of the 2 whose identity was not found (P-2 failed, P-10 is new); then the rewrite,
		// with the marker that no session failed.
		expect(checked).toEqual([12, 3, 2, 20]);
		expect(listSize()).toBe(20);

		checked = [];
		const quiet = await run(night);
		expect(quiet).toMatchObject({ sent: 0, unchanged: 9, missing: 0 });
		expect(checked).toEqual([12]);

		// An invalid item's product is not among the run's products (the memory forgets it too).
		const withInvalid = night.map((product) =>
			product.sku === 'P-4' ? { ...product, sku: { id: 4 } } : product,
		);
		const invalid = await run(withInvalid, counting(), { continueOnFail: true });
		expect(invalid).toMatchObject({ invalid: 1, unchanged: 8, missing: 1 });

		// Every product changed: every identity is found, so no failed value is looked up or recorded.
		checked = [];
		const everyChanged = await run(night.map((product) => ({ ...product, price: 20 })));
		expect(everyChanged).toMatchObject({ sent: 9, unchanged: 0, missing: 0 });
		expect(checked).toEqual([12, 9, 20]);
	});

	it('a run with the option off drops the identities; the next with it on counts nothing, the one after counts again', async () => {
		await run(catalogue(6));
		expect(await run(catalogue(6))).toMatchObject({ missing: 0 });
		expect(listSize()).toBe(14);

		const off = await run(catalogue(6), counting({ countMissingProducts: false }));
		expect(off).toMatchObject({ sent: 0, unchanged: 6 });
		expect(off).not.toHaveProperty('missing');
		// Nothing was sent, so the list was put back, identities and all.
		expect(listSize()).toBe(14);

		const changed = catalogue(6);
		changed[0].price = 12;
		await run(changed, counting({ countMissingProducts: false }));
		expect(listSize()).toBe(7);

		const on = await run(catalogue(5));
		expect(on).toMatchObject({ missing: null });
		expect(String(on.missingNote)).toMatch(/^Not counted: the last run did not keep/);
		expect(listSize()).toBe(12);
		expect(await run(catalogue(3))).toMatchObject({ missing: 2 });
	});

	it('after a check cut short nothing the memory holds is trusted, so nothing is counted', async () => {
		await run(catalogue(4));
		const changed = catalogue(4);
		changed[2].price = 30;
		// Every write after the first check fails, as when the process dies there.
		deduplicator.failCalls('checkProcessedAndRecord', { after: 1, times: Infinity });
		deduplicator.failCalls('removeProcessed', { times: Infinity });
		deduplicator.failCalls('clearAllProcessedItems', { times: Infinity });
		const broken = await runNode({
			node,
			nodeId,
			parameters: counting(),
			items: asItems(changed),
			credentials: fastCredentials(emulator),
		});
		expect(broken.error).toBeDefined();
		deduplicator.stopFailing();

		const next = await run(catalogue(3));
		expect(next).toMatchObject({ sent: 3, missing: null });
		expect(String(next.missingNote)).toMatch(/^Not counted: the last run's check was cut short/);
		expect(await run(catalogue(2))).toMatchObject({ missing: 1 });
	});

	it('Send All Products does not count, and keeps the identities for the next run', async () => {
		await run(catalogue(4));
		const all = await run(catalogue(4), counting({ sendAllProducts: true }));
		expect(all).toMatchObject({ sent: 4, missing: null });
		expect(String(all.missingNote)).toMatch(/^Not counted: Send All Products/);
		expect(await run(catalogue(3))).toMatchObject({ missing: 1 });
	});

	it('Validate Only and a run the service refused leave the list exactly as found, identities included', async () => {
		await run(catalogue(10));
		await run(catalogue(10));
		await takeUploadedSkus(emulator);
		const sizes = store.sizes();
		expect(listSize()).toBe(22);

		const sample = catalogue(12).filter(({ sku }) => sku !== 'P-5');
		sample[0].price = 50;
		const validated = await run(sample, counting({ validateOnly: true }));
		expect(validated).toMatchObject({ wouldSend: 3, unchanged: 8, missing: 1 });
		expect(store.sizes()).toEqual(sizes);

		const refused = await runNode({
			node,
			nodeId,
			parameters: counting(),
			items: asItems(sample),
			credentials: fastCredentials(emulator, { password: 'not-the-password' }),
		});
		expect(refused.error).toBeDefined();
		expect(emulator.stats().uploads).toBe(0);
		expect(store.sizes()).toEqual(sizes);

		expect(await run(sample)).toMatchObject({ sent: 3, unchanged: 8, missing: 1 });
	});
});
