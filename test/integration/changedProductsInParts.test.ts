import { randomUUID } from 'node:crypto';

import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { RedisProductMemory } from '../../nodes/shared/fullEdition/productMemory';
import { EDITION } from '../../nodes/edition/edition';
import { useEdition, type ProductMemory } from '../../nodes/shared/ports';
import { runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, fastCredentials, requestsSpent, useEmulator } from '../helpers/emulator';
import { postControl } from '../helpers/service';
import { asItems, onlyChangedFromItems, products } from '../helpers/changedProducts';
import { useProductMemoryRedis } from '../helpers/productMemoryRedis';
import { takeUploadedSkus } from '../helpers/uploads';

const { withRedis, connection, raw } = useProductMemoryRedis('parts-redis-password');
const HOLDER = 'a holder key';

jest.setTimeout(30_000);

const node = new ProductDataIntegration();

function inParts(extra: IDataObject = {}): INodeParameters {
	return onlyChangedFromItems({ productsInEachRun: 'partOfCatalogue', ...extra });
}

describe('Only Changed Products, part of the catalogue per run', () => {
	const { emulator } = useEmulator(FAST_BUCKET);
	let nodeId: string;

	const requests = () => requestsSpent(emulator);

	async function run(
		items: INodeExecutionData[],
		parameters = inParts(),
		sharing: IDataObject = withRedis(),
	) {
		const credentials = fastCredentials(emulator, sharing);
		return await runNode({ node, nodeId, parameters, items, credentials });
	}

	beforeEach(() => {
		nodeId = randomUUID();
	});

	it('remembers each page on its own: a page run never forgets the products of other pages', async () => {
		expect((await run(asItems(products(0, 10)))).error).toBeUndefined();
		expect((await run(asItems(products(10, 20)))).error).toBeUndefined();
		expect(await takeUploadedSkus(emulator)).toHaveLength(20);

		// The first page again: a run of the whole catalogue would have forgotten it.
		const again = await run(asItems(products(0, 10)));
		expect(again.error).toBeUndefined();
		expect(requests()).toBe(0);
		expect(again.output[0][0].json.run).toMatchObject({ products: 10, sent: 0, unchanged: 10 });

		const secondPage = products(10, 20);
		secondPage[4].price = 11;
		const changed = await run(asItems(secondPage));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-14']);
		expect(changed.output[0][4]).toMatchObject({
			json: { product: 'P-14', sent: true, reason: 'changed', confirmed: true },
			pairedItem: { item: 4 },
		});
	});

	it('keeps the memory in Redis, where the product ids and contents are digests', async () => {
		const memories = async () =>
			(await raw().keys('n8n-nodes-product-data-integration:products:*')).filter(
				(key) => !key.endsWith(':claims'),
			);
		const before = new Set(await memories());
		await run(asItems(products(0, 5)));
		// This node's memory: the one the run added beside those of the tests before it.
		const [memory] = (await memories()).filter((key) => !before.has(key));
		const fields = await raw().hgetall(memory);
		expect(Object.keys(fields)).toHaveLength(5);
		expect(JSON.stringify(fields)).not.toMatch(/P-\d|Product \d/);
		// Every claim was let go once the run remembered its products.
		expect(await raw().hlen(`${memory}:claims`)).toBe(0);

		// What the memory holds is in Redis only: emptied, every product goes again.
		await raw().del(memory);
		emulator.reset();
		await run(asItems(products(0, 5)));
		expect(await takeUploadedSkus(emulator)).toHaveLength(5);
	});

	it('sends again the products of a session that finished with errors, and only those', async () => {
		await postControl(emulator.url, 'failing', { texts: ['<sku>P-2</sku>'] });
		const first = await run(asItems(products(0, 4)), inParts({ itemsPerDocument: 2 }));
		expect(first.output[0][2].json).toMatchObject({ status: 'failed', confirmed: false });
		await postControl(emulator.url, 'failing', { texts: [] });
		emulator.reset();

		const second = await run(asItems(products(0, 4)), inParts({ itemsPerDocument: 2 }));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-2', 'P-3']);
		expect(second.output[0].map(({ json }) => json.reason)).toEqual([
			'unchanged',
			'unchanged',
			'sentAgainAfterFailure',
			'sentAgainAfterFailure',
		]);
	});

	it('says it needs Redis before any request where the account has none', async () => {
		const result = await run(asItems(products(0, 3)), inParts(), {});
		expect(result.error?.message).toBe(
			'Products in Each Run "Part of the Catalogue" needs a memory that every n8n process shares',
		);
		// It points to the memory that needs no Redis.
		expect(result.error?.description).toContain('set Memory Kept In to "The Workflow"');
		expect(requests()).toBe(0);
	});

	it('says Redis could not be asked before any request when it does not answer', async () => {
		const result = await run(asItems(products(0, 3)), inParts(), {
			...withRedis(),
			redisPassword: 'not the password',
		});
		expect(result.error?.message).toMatch(
			/^Only Changed Products could not ask Redis for what the service confirmed: /,
		);
		expect(result.error?.message).not.toContain('not the password');
		// Redis's own reason, not the wording of the shared rate limit that uses the same connection.
		expect(result.error?.message).not.toContain('rate limit');
		expect(requests()).toBe(0);
	});

	it('outputs every session it uploaded when Redis fails once they finished, and remembers none', async () => {
		const failing: ProductMemory = {
			bound: 100,
			recall: async (keys) => keys.map(() => undefined),
			claim: async () => ({ taken: new Set<string>() }),
			remember: async (entries) => {
				if (entries.length > 0) throw new Error('connection lost');
				return 0;
			},
			collect: async () => {
				throw new Error('not a collecting run');
			},
			take: async () => {
				throw new Error('not a collecting run');
			},
			closeNight: async () => {
				throw new Error('not a collecting run');
			},
		};
		useEdition({ ...EDITION, productMemory: () => failing });
		try {
			const result = await run(asItems(products(0, 3)));
			expect(result.error).toBeUndefined();
			expect(result.output[0].map(({ json }) => json.sessionId)).toEqual([
				expect.any(String),
				expect.any(String),
				expect.any(String),
			]);
			expect(result.output[0][0].json.run).toMatchObject({
				sent: 3,
				memory:
					'Not remembered: Redis could not be asked (connection lost). What this run sent goes again in a later run.',
			});
		} finally {
			useEdition(EDITION);
		}
	});

	it('Send All Products sends every product of the run, then remembers them again', async () => {
		await run(asItems(products(0, 3)));
		emulator.reset();
		const all = await run(asItems(products(0, 3)), inParts({ sendAllProducts: true }));
		expect(all.output[0][0].json.run).toMatchObject({ sent: 3, unchanged: 0 });
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-1', 'P-2']);
		emulator.reset();
		await run(asItems(products(0, 3)));
		expect(requests()).toBe(0);
	});

	it('Validate Only looks up the memory and writes nothing', async () => {
		await run(asItems(products(0, 3)));
		const changed = products(0, 3);
		changed[1].price = 99;
		emulator.reset();
		const dry = await run(asItems(changed), inParts({ validateOnly: true }));
		expect(requests()).toBe(0);
		expect(dry.output[0][0].json.run).toMatchObject({ wouldSend: 1, unchanged: 2 });
		await run(asItems(changed));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-1']);
	});
});

describe('Only Changed Products, runs of parts side by side', () => {
	const { emulator } = useEmulator({ ...FAST_BUCKET, processingMs: 1500 });

	it('fails the items whose products another run is sending, and sends the rest', async () => {
		const nodeId = randomUUID();
		const credentials = fastCredentials(emulator, withRedis());
		const go = async (json: IDataObject[]) =>
			await runNode({
				node,
				nodeId,
				parameters: inParts(),
				items: asItems(json),
				credentials,
				continueOnFail: true,
			});
		const first = go(products(0, 4));
		// The second starts while the first waits for its session.
		await new Promise((resolve) => setTimeout(resolve, 500));
		const second = await go(products(2, 6));
		expect(second.output[0].map(({ json }) => json.error ?? json.reason)).toEqual([
			'The product "P-2" of item 0 is being sent by another run of this node',
			'The product "P-3" of item 1 is being sent by another run of this node',
			'changed',
			'changed',
		]);
		expect((await first).output[0].every(({ json }) => json.confirmed === true)).toBe(true);
		expect((await takeUploadedSkus(emulator)).sort()).toEqual(
			['P-0', 'P-1', 'P-2', 'P-3', 'P-4', 'P-5'].sort(),
		);
	});
});

describe('the memory per product in Redis', () => {
	it('holds a claim until it runs out, and writes only what the run still claims', async () => {
		let now = 1_000_000;
		const memory = new RedisProductMemory(connection(), HOLDER, randomUUID(), {}, () => now);
		expect(await memory.claim(['a', 'b'], 'run-1', now + 10_000)).toEqual({ taken: new Set() });
		expect(await memory.claim(['b', 'c'], 'run-2', now + 60_000)).toEqual({
			taken: new Set(['b']),
		});
		now += 10_001;
		// run-1's claims ran out: run-3 takes b, and run-1 no longer writes it.
		expect(await memory.claim(['b'], 'run-3', now + 10_000)).toEqual({ taken: new Set() });
		expect(
			await memory.remember(
				[
					['a', 'ca'],
					['b', 'cb'],
				],
				'run-1',
				['a', 'b'],
			),
		).toBe(0);
		expect(await memory.remember([['b', 'cb']], 'run-3', ['b'])).toBe(1);
		expect(await memory.recall(['a', 'b', 'c'])).toEqual([undefined, 'cb', undefined]);
		// run-1 let go of nothing that run-3 holds, and run-2 still holds c.
		expect(await memory.claim(['c'], 'run-4', now + 10_000)).toEqual({ taken: new Set(['c']) });
	});

	it('refuses a run that would pass its bound, per node and per holder, claiming nothing', async () => {
		const scope = randomUUID();
		const holder = randomUUID();
		const bounds = { products: 3, productsPerHolder: 5 };
		const memory = new RedisProductMemory(connection(), holder, scope, bounds);
		expect(await memory.claim(['a', 'b', 'c', 'd'], 'run-1', Date.now() + 60_000)).toBe('full');
		expect(await memory.claim(['a', 'b', 'c'], 'run-2', Date.now() + 60_000)).toEqual({
			taken: new Set(),
		});
		await memory.remember(
			[
				['a', '1'],
				['b', '1'],
				['c', '1'],
			],
			'run-2',
			['a', 'b', 'c'],
		);
		// Known products are no new ones.
		expect(await memory.claim(['a', 'b', 'c'], 'run-3', Date.now() + 60_000)).toEqual({
			taken: new Set(),
		});
		const other = new RedisProductMemory(connection(), holder, randomUUID(), bounds);
		expect(await other.claim(['x', 'y', 'z'], 'run-4', Date.now() + 60_000)).toBe('full');
		expect(await other.claim(['x', 'y'], 'run-4', Date.now() + 60_000)).toEqual({
			taken: new Set(),
		});
		// Another holder's memories count nothing against this one's bound.
		const stranger = new RedisProductMemory(connection(), randomUUID(), randomUUID(), bounds);
		expect(await stranger.claim(['x', 'y', 'z'], 'run-5', Date.now() + 60_000)).toEqual({
			taken: new Set(),
		});
	});

	it('looks up and writes a page of products in slices, whatever their number', async () => {
		const memory = new RedisProductMemory(connection(), HOLDER, randomUUID());
		const keys = Array.from({ length: 2500 }, (_, index) => `k${index}`);
		await memory.claim(keys, 'run', Date.now() + 60_000);
		expect(
			await memory.remember(
				keys.map((key) => [key, `v${key}`]),
				'run',
				keys,
			),
		).toBe(2500);
		const values = await memory.recall([...keys, 'unknown']);
		expect(values[2499]).toBe('vk2499');
		expect(values[2500]).toBeUndefined();
	});
});
