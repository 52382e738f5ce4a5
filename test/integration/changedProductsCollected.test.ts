import { randomUUID } from 'node:crypto';

import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { RedisProductMemory } from '../../nodes/shared/fullEdition/productMemory';
import { call } from '../../scripts/emulator/client';
import { runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, fastCredentials, requestsSpent, useEmulator } from '../helpers/emulator';
import { postControl } from '../helpers/service';
import { asItems, onlyChangedFromItems, products } from '../helpers/changedProducts';
import { useProductMemoryRedis } from '../helpers/productMemoryRedis';
import { takeUploadedSkus } from '../helpers/uploads';

const { withRedis, connection, raw } = useProductMemoryRedis('collected-redis-password');

jest.setTimeout(30_000);

const node = new ProductDataIntegration();

describe('Only Changed Products, changed products of many runs collected into full documents', () => {
	const { emulator } = useEmulator(FAST_BUCKET);
	let memoryName: string;

	const requests = () => requestsSpent(emulator);
	const uploads = () => emulator.stats().requests['PUT /api/xml'] ?? 0;

	function collecting(extra: IDataObject = {}): INodeParameters {
		return onlyChangedFromItems({
			productsInEachRun: 'partOfCatalogue',
			sendChangedProducts: 'collected',
			memoryName,
			productsPerDocument: 25,
			...extra,
		});
	}

	// Each page is a run of its own, as page sub-workflows on several workers are.
	async function page(json: IDataObject[], parameters = collecting(), continueOnFail = false) {
		const credentials = fastCredentials(emulator, withRedis());
		return await runNode({
			node,
			nodeId: randomUUID(),
			parameters,
			items: asItems(json),
			credentials,
			continueOnFail,
		});
	}

	async function sendTheRest(extra: IDataObject = {}) {
		const credentials = fastCredentials(emulator, withRedis());
		return await runNode({
			node,
			nodeId: randomUUID(),
			parameters: {
				resource: 'document',
				operation: 'sendCollected',
				memoryName,
				productsPerDocument: 25,
				...extra,
			} as INodeParameters,
			items: [{ json: {} }],
			credentials,
		});
	}

	async function night(pages: IDataObject[][]) {
		const outputs = [];
		for (const json of pages) outputs.push(await page(json));
		return { pages: outputs, rest: await sendTheRest() };
	}

	const catalogue = (price = 10) => [0, 1, 2].map((at) => products(at * 10, at * 10 + 10, price));

	beforeEach(() => {
		memoryName = `catalogue-${randomUUID()}`;
	});

	it('sends the changed products of all pages in documents of Products per Document, then nothing on a quiet night', async () => {
		const first = await night(catalogue());
		// Pages 1 and 2 only collect; page 3 fills a document of 25; the rest goes with the last step.
		expect(first.pages[0].output[0][0].json).toMatchObject({
			product: 'P-0',
			sent: false,
			reason: 'changed',
			collected: true,
		});
		expect(first.pages[0].output[0][0].json.run).toMatchObject({
			collected: 10,
			documentsSent: [],
		});
		const filling = first.pages[2].output[0];
		expect(filling[0].json.run).toMatchObject({
			collected: 10,
			documentsSent: [expect.objectContaining({ products: 25, status: 'succeeded' })],
		});
		const sessionOfFilling = (filling[0].json.run as IDataObject[] & IDataObject)
			.documentsSent as IDataObject[];
		// Products of this page that went in its document carry the session; the others were collected.
		expect(filling.map(({ json }) => json.sessionId ?? 'collected')).toEqual([
			...Array(5).fill(sessionOfFilling[0].sessionId),
			...Array(5).fill('collected'),
		]);
		expect(first.rest.error).toBeUndefined();
		expect(first.rest.output[0]).toEqual([
			{
				json: expect.objectContaining({
					memoryName,
					productsSent: 5,
					documents: [expect.objectContaining({ products: 5, status: 'succeeded' })],
				}),
				pairedItem: { item: 0 },
			},
		]);
		expect(uploads()).toBe(2);
		const skus = await takeUploadedSkus(emulator);
		expect(skus).toEqual(
			catalogue()
				.flat()
				.map(({ sku }) => sku as string)
				.sort(),
		);

		const quiet = await night(catalogue());
		expect(requests()).toBe(0);
		expect(quiet.rest.output[0][0].json).toMatchObject({ productsSent: 0, documents: [] });
	});

	it('sends a night of a few changes on many pages as one document', async () => {
		await night(catalogue());
		emulator.reset();
		const pages = catalogue();
		pages[0][3].price = 11;
		pages[1][7].price = 11;
		pages[2][0].price = 11;
		await night(pages);
		expect(uploads()).toBe(1);
		expect(await takeUploadedSkus(emulator)).toEqual(['P-17', 'P-20', 'P-3']);
	});

	it('sends a product collected twice before it went once, with its newest content', async () => {
		const older = products(0, 1, 10);
		const newer = products(0, 1, 12);
		await page(older);
		await page(newer);
		await sendTheRest();
		expect(uploads()).toBe(1);
		const [upload] = emulator.uploads();
		const file = await call(emulator, 'GET', `/api/files/${upload.id}`);
		expect(file.text).toContain('<price>12</price>');
		expect(file.text).not.toContain('<price>10</price>');
		emulator.reset();
		await page(newer);
		await sendTheRest();
		expect(requests()).toBe(0);
	});

	it('sends again the products of a collected document whose session finished with errors', async () => {
		await postControl(emulator.url, 'failing', { texts: ['<sku>P-2</sku>'] });
		await page(products(0, 4));
		const failed = await sendTheRest();
		expect(failed.output[0][0].json.documents).toEqual([
			expect.objectContaining({ products: 4, status: 'failed' }),
		]);
		await postControl(emulator.url, 'failing', { texts: [] });
		emulator.reset();
		const again = await page(products(0, 4));
		expect(again.output[0].map(({ json }) => json.reason)).toEqual(
			Array(4).fill('sentAgainAfterFailure'),
		);
		await sendTheRest();
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2', 'P-3']);
	});

	it('keeps the products of a document that could not be uploaded collected, and names its sessions', async () => {
		await page(products(0, 30));
		// The run sent a document of 25; 5 wait. Every try of the next upload fails.
		await postControl(emulator.url, 'faults', { count: 10, kind: '503', path: '/api/xml' });
		const failed = await sendTheRest();
		expect(failed.error?.message).toMatch(
			/^1 of 1 collected documents of "catalogue-.*" could not be uploaded: /,
		);
		expect(failed.error?.description).toContain('stay collected');
		await postControl(emulator.url, 'reset', {});
		emulator.reset();
		const rest = await sendTheRest();
		expect(rest.output[0][0].json).toMatchObject({ productsSent: 5 });
		expect(await takeUploadedSkus(emulator)).toEqual(
			['P-25', 'P-26', 'P-27', 'P-28', 'P-29'].sort(),
		);
	});

	it('refuses a page whose documents differ from those the memory is collecting, before any request', async () => {
		await page(products(0, 3));
		emulator.reset();
		const other = await page(products(3, 6), collecting({ rootElement: 'Catalogue' }));
		expect(other.error?.message).toBe(
			`The memory "${memoryName}" is collecting products for other documents`,
		);
		expect(other.error?.description).toContain('/api/xml in <Products>');
		expect(requests()).toBe(0);
		await sendTheRest();
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2']);
	});

	it('names the item and the field of a bad Memory Name or Products per Document, before any request', async () => {
		const noName = await page(products(0, 2), collecting({ memoryName: ' ' }));
		expect(noName.error?.message).toBe('Memory Name of item 0 is empty');
		const noSize = await page(products(0, 2), collecting({ productsPerDocument: 0 }));
		expect(noSize.error?.message).toBe(
			'Products per Document of item 0 must be a whole number of 1 or more',
		);
		expect(requests()).toBe(0);
	});

	it('fails only the item whose product cannot become XML, and collects the others', async () => {
		const json = products(0, 3);
		json[1] = { ...json[1], 'bad name': 1 };
		const result = await page(json, collecting(), true);
		expect(result.output[0].map(({ json: out }) => (out.error ? 'failed' : out.collected))).toEqual(
			[true, 'failed', true],
		);
		await sendTheRest();
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-2']);
	});

	it('counts, names and forgets the products no page held on a night of the whole catalogue', async () => {
		const first = await night(catalogue());
		expect(first.rest.output[0][0].json).toMatchObject({ missing: 0, missingProducts: [] });
		// Redis holds the ids sealed: no product id is readable there.
		const stored = await raw().keys('n8n-nodes-product-data-integration:products:*');
		for (const key of stored)
			if ((await raw().type(key)) === 'hash')
				expect(JSON.stringify(await raw().hgetall(key))).not.toMatch(/P-\d/);
		emulator.reset();

		const pages = catalogue();
		pages[0].splice(5, 1);
		pages[1].splice(7, 1);
		const dropped = await night(pages);
		expect(requests()).toBe(0);
		expect(dropped.rest.output[0][0].json).toMatchObject({ missing: 2 });
		expect((dropped.rest.output[0][0].json.missingProducts as string[]).sort()).toEqual([
			'P-17',
			'P-5',
		]);

		// Forgotten: back in the catalogue, each is sent as new, and counted missing no more.
		const back = await night(catalogue());
		expect(back.rest.output[0][0].json).toMatchObject({ missing: 0 });
		expect(await takeUploadedSkus(emulator)).toEqual(['P-17', 'P-5']);
	});

	it('counts none on a night of a delta feed, and forgets nothing', async () => {
		await night(catalogue());
		emulator.reset();
		await page(products(3, 5, 11));
		const delta = await sendTheRest({ countMissingProducts: false });
		expect(delta.output[0][0].json).toMatchObject({
			productsSent: 2,
			missing:
				'not counted: Count Missing Products is off (a night of a delta feed holds only what changed)',
		});
		expect(delta.output[0][0].json.missingProducts).toBeUndefined();
		await takeUploadedSkus(emulator);
		// The next full night finds every other product as it was remembered.
		const full = catalogue();
		full[0][3].price = 11;
		full[0][4].price = 11;
		const next = await night(full);
		expect(requests()).toBe(0);
		expect(next.rest.output[0][0].json).toMatchObject({ missing: 0 });
	});

	it('a page that sends all its products still holds them for the count', async () => {
		await night(catalogue());
		const pages = catalogue();
		const [sendAll, ...others] = pages;
		await page(sendAll, collecting({ sendAllProducts: true }));
		for (const json of others) await page(json);
		const rest = await sendTheRest();
		expect(rest.output[0][0].json).toMatchObject({ productsSent: 10, missing: 0 });
	});

	it('Validate Only collects nothing', async () => {
		const dry = await page(products(0, 3), collecting({ validateOnly: true }));
		expect(dry.output[0][0].json.run).toMatchObject({ wouldSend: 3, collecting: true });
		expect(dry.output[0][0].json.run).not.toHaveProperty('message');
		const rest = await sendTheRest();
		expect(rest.output[0][0].json).toMatchObject({ productsSent: 0 });
		expect(requests()).toBe(0);
	});
});

describe('collected documents whose sessions are still processing', () => {
	const { emulator } = useEmulator({ ...FAST_BUCKET, processingMs: 1500 });

	it('lists their sessions and remembers none of their products, which go again next time', async () => {
		const memoryName = `catalogue-${randomUUID()}`;
		const credentials = fastCredentials(emulator, withRedis());
		const collect = async () =>
			await runNode({
				node,
				nodeId: randomUUID(),
				parameters: {
					resource: 'document',
					operation: 'upload',
					source: 'items',
					rootElement: 'Products',
					itemElement: 'Product',
					onlyChangedProducts: true,
					productField: 'sku',
					productsInEachRun: 'partOfCatalogue',
					sendChangedProducts: 'collected',
					memoryName,
				} as INodeParameters,
				items: asItems(products(0, 3)),
				credentials,
			});
		const sendTheRest = async () =>
			await runNode({
				node,
				parameters: {
					resource: 'document',
					operation: 'sendCollected',
					memoryName,
					options: { timeout: 0 },
				} as INodeParameters,
				items: [{ json: {} }],
				credentials,
			});
		await collect();
		const rest = await sendTheRest();
		expect(rest.output[0][0].json.documents).toEqual([
			expect.objectContaining({
				sessionId: expect.any(String),
				status: 'processing',
				timedOut: true,
			}),
		]);
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2']);
		const again = await collect();
		expect(again.output[0].map(({ json }) => json.reason)).toEqual(Array(3).fill('changed'));
	});
});

describe('the collection of a memory in Redis', () => {
	/** Products `key-<from>` up to `key-<to>` (excluded), claimed by a page and collected. */
	async function collected(
		memory: RedisProductMemory,
		until: number,
		from: number,
		to: number,
	): Promise<Array<[string, string]>> {
		const entries = Array.from({ length: to - from }, (_, index): [string, string] => [
			`key-${from + index}`,
			`value ${from + index}`,
		]);
		await memory.claim(
			entries.map(([key]) => key),
			'pages',
			until,
		);
		await memory.collect(entries, 'pages', 'documents', until);
		return entries;
	}

	it('collects only products no other run claims, and takes the oldest first in documents', async () => {
		const memory = new RedisProductMemory(connection(), 'a holder key', randomUUID());
		const until = Date.now() + 60_000;
		await memory.claim(['a', 'b'], 'run-1', until);
		await memory.claim(['c'], 'run-2', until);
		const answer = await memory.collect(
			[
				['a', 'value a'],
				['b', 'value b'],
				['c', 'value c'],
			],
			'run-1',
			'documents',
			until,
		);
		expect(answer).toEqual({ notCollected: new Set(['c']) });
		expect(await memory.take('run-3', until, 3, 3)).toBeUndefined();
		expect(await memory.collect([['b', 'newer b']], 'run-4', 'other documents', until)).toEqual({
			otherDocuments: 'documents',
		});
		expect(await memory.take('run-3', until, 1, 1)).toEqual({
			documents: 'documents',
			products: [['a', 'value a']],
		});
		// Taken, a product is the taker's: no other run collects it until the taker lets go.
		expect(await memory.collect([['a', 'again']], 'run-4', 'documents', until)).toEqual({
			notCollected: new Set(['a']),
		});
		expect(await memory.take('run-3', until, 1, 5)).toEqual({
			documents: 'documents',
			products: [['b', 'value b']],
		});
		expect(await memory.take('run-3', until, 1, 5)).toBeUndefined();
	});

	it('takes a document of many thousand products whole, a script per thousand', async () => {
		const memory = new RedisProductMemory(connection(), 'a holder key', randomUUID());
		const until = Date.now() + 60_000;
		const entries = await collected(memory, until, 0, 2_500);
		const scripts = async () =>
			Number(/cmdstat_eval:calls=(\d+)/.exec(await raw().info('commandstats'))?.[1] ?? 0);
		expect(await memory.take('run-2', until, 2_501, 2_500)).toBeUndefined();
		const before = await scripts();
		expect(await memory.take('run-2', until, 2_500, 2_400)).toEqual({
			documents: 'documents',
			products: entries.slice(0, 2_400),
		});
		expect((await scripts()) - before).toBe(3);
		expect((await memory.take('run-2', until, 1, 2_400))?.products).toEqual(entries.slice(2_400));
	});

	it('never shares a document out between runs taking at once: the first slice sets its size', async () => {
		const memory = new RedisProductMemory(connection(), 'a holder key', randomUUID());
		const until = Date.now() + 60_000;
		const sizes = async () =>
			(
				await Promise.all(
					['run-1', 'run-2'].map(async (run) => await memory.take(run, until, 2_000, 2_000)),
				)
			).map((taken) => taken?.products.length);
		// Slices of 1,000 alternate between the two runs: the second must not start a document that
		// the first one's is about to take the products of.
		await collected(memory, until, 0, 3_500);
		expect(await sizes()).toEqual([2_000, undefined]);
		await collected(memory, until, 3_500, 6_500);
		expect(await sizes()).toEqual([2_000, 2_000]);
		expect((await memory.take('run-3', until, 1, 2_000))?.products).toHaveLength(500);
	});

	it('holds back the document of a run gone between its slices a minute at most', async () => {
		const scope = randomUUID();
		const memory = new RedisProductMemory(connection(), 'a holder key', scope);
		const until = Date.now() + 60_000;
		await collected(memory, until, 0, 2_500);
		// A run that set its document of 2,000 and was gone before its first slice came back.
		const taking = `n8n-nodes-product-data-integration:products:${scope}:collected-taking`;
		await raw().hset(taking, 'gone', `2000 ${Date.now() + 60_000}`);
		expect((await memory.take('run-1', until, 1, 2_000))?.products).toHaveLength(500);
		expect(await memory.take('run-1', until, 1, 2_000)).toBeUndefined();
		await raw().hset(taking, 'gone', `2000 ${Date.now() - 1}`);
		expect((await memory.take('run-1', until, 1, 2_000))?.products).toHaveLength(2_000);
		expect(await raw().exists(taking)).toBe(0);
	});
});
