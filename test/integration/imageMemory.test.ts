import { randomBytes } from 'node:crypto';

import Redis from 'ioredis';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { ProcessKnownImages } from '../../nodes/shared/knownImages/memory';
import { RedisKnownImages } from '../../nodes/shared/fullEdition/knownImages';
import { closeStores, storeFor } from '../../nodes/shared/fullEdition/sharedRegistry';
import {
	binaryItem,
	NODE_NAME,
	runNode,
	setBinaryDataMode,
	type RunNodeResult,
} from '../../scripts/n8n/in-process';
import { freePort } from '../../scripts/n8n/processes';
import { startRedis, type RedisServer } from '../../scripts/redis';
import { FAST_BUCKET, fastCredentials, useEmulator } from '../helpers/emulator';

jest.setTimeout(60_000);

const DAY = 24 * 60 * 60 * 1000;
const PASSWORD = 'image-memory-password';
/** Whose memories these are: the transport's holderKey of a credential, here any name. */
const HOLDER = 'holder';
const md5 = (n: number) => n.toString(16).padStart(32, '0');

let redis: RedisServer;
let raw: Redis;

beforeAll(async () => {
	redis = await startRedis({ password: PASSWORD });
	raw = new Redis({ host: '127.0.0.1', port: redis.port, password: PASSWORD });
});

afterAll(async () => {
	raw.disconnect();
	await closeStores();
	await redis.stop();
});

describe('known images in this process', () => {
	it('recalls an image until the age has passed, per scope, and forgets a scope', async () => {
		let now = 1_000_000;
		const north = new ProcessKnownImages('north', 7 * DAY, () => now);
		const south = new ProcessKnownImages('south', 7 * DAY, () => now);
		await north.remember([{ md5: md5(1), hashcode: 'h1' }]);

		expect(await north.recall([md5(1), md5(2)])).toEqual(new Map([[md5(1), 'h1']]));
		expect(await south.recall([md5(1)])).toEqual(new Map());
		now += 7 * DAY - 1;
		expect((await north.recall([md5(1)])).get(md5(1))).toBe('h1');
		now += 1;
		expect(await north.recall([md5(1)])).toEqual(new Map());

		await north.remember([{ md5: md5(3), hashcode: 'h3' }]);
		// The expired image went with that write.
		expect(await north.forget()).toBe(1);
		expect(await north.recall([md5(3)])).toEqual(new Map());
	});

	it('keeps at most 100,000 images, dropping the oldest', async () => {
		const memory = new ProcessKnownImages('bound', DAY);
		const entries = Array.from({ length: 100_001 }, (_, n) => ({ md5: md5(n), hashcode: `h${n}` }));
		await memory.remember(entries);

		expect((await memory.recall([md5(0), md5(1), md5(100_000)])).size).toBe(2);
		expect((await memory.recall([md5(0)])).size).toBe(0);
		expect(await memory.forget()).toBe(100_000);
	});

	it('keeps an entry as long as its longest-trusting writer says: a short age never cuts it', async () => {
		let now = 1_000_000;
		const scope = randomBytes(8).toString('hex');
		await new ProcessKnownImages(scope, 7 * DAY, () => now).remember([
			{ md5: md5(1), hashcode: 'h1' },
		]);
		await new ProcessKnownImages(scope, 60_000, () => now).remember([
			{ md5: md5(1), hashcode: 'h1' },
		]);

		now += DAY;
		const reader = new ProcessKnownImages(scope, 7 * DAY, () => now);
		expect(await reader.recall([md5(1)])).toEqual(new Map([[md5(1), 'h1']]));
		expect(await reader.forget()).toBe(1);
	});

	it('removes expired entries, the oldest 1000 per write, while it keeps being written', async () => {
		let now = 1_000_000;
		const memory = new ProcessKnownImages(randomBytes(8).toString('hex'), DAY, () => now);
		await memory.remember(
			Array.from({ length: 1500 }, (_, n) => ({ md5: md5(n), hashcode: `h${n}` })),
		);
		now += 2 * DAY;

		await memory.remember([{ md5: md5(10_000), hashcode: 'new' }]);
		expect(await memory.forget()).toBe(501);
	});
});

describe('known images in Redis', () => {
	const connection = () => ({ host: '127.0.0.1', port: redis.port, db: 0, password: PASSWORD });

	it('shares images between instances (processes), trusts them for the age, and lets the keys expire with it', async () => {
		let now = Date.now();
		const scope = randomBytes(8).toString('hex');
		const writer = new RedisKnownImages(
			connection(),
			HOLDER,
			scope,
			7 * DAY,
			{ entries: 1000 },
			() => now,
		);
		const reader = new RedisKnownImages(
			connection(),
			HOLDER,
			scope,
			7 * DAY,
			{ entries: 1000 },
			() => now,
		);
		await writer.remember([
			{ md5: md5(1), hashcode: 'h1' },
			{ md5: md5(2), hashcode: 'h2' },
		]);

		expect(await reader.recall([md5(1), md5(2), md5(3)])).toEqual(
			new Map([
				[md5(1), 'h1'],
				[md5(2), 'h2'],
			]),
		);
		const keys = await raw.keys(`*${scope}*`);
		expect(keys.sort()).toEqual([
			`n8n-nodes-product-data-integration:images:${scope}`,
			`n8n-nodes-product-data-integration:images:${scope}:expiry`,
		]);
		for (const key of keys) {
			const ttl = await raw.pttl(key);
			expect(ttl).toBeGreaterThan(6 * DAY);
			expect(ttl).toBeLessThanOrEqual(7 * DAY);
		}
		now += 7 * DAY;
		expect(await reader.recall([md5(1)])).toEqual(new Map());
	});

	it('keeps at most its bound per account and customer node, dropping what expires first', async () => {
		let now = Date.now();
		const scope = randomBytes(8).toString('hex');
		const memory = new RedisKnownImages(
			connection(),
			HOLDER,
			scope,
			DAY,
			{ entries: 3 },
			() => now,
		);
		for (let n = 0; n < 5; n++) {
			await memory.remember([{ md5: md5(n), hashcode: `h${n}` }]);
			now += 1000;
		}

		expect([...(await memory.recall([0, 1, 2, 3, 4].map(md5))).values()]).toEqual([
			'h2',
			'h3',
			'h4',
		]);
		expect(await raw.hlen(`n8n-nodes-product-data-integration:images:${scope}`)).toBe(3);
		expect(await memory.forget()).toBe(3);
		expect(await raw.keys(`*${scope}*`)).toEqual([]);
	});

	it("grows the memory's lifetime and each entry's, never shortens them: one writer's short age leaves the others' entries", async () => {
		let now = Date.now();
		const scope = randomBytes(8).toString('hex');
		const owner = new RedisKnownImages(connection(), HOLDER, scope, 7 * DAY, {}, () => now);
		await owner.remember(
			Array.from({ length: 1000 }, (_, n) => ({ md5: md5(n), hashcode: `h${n}` })),
		);
		// One writer trusting images for 86 ms (0.000001 days) remembers one of them again and a new one.
		const hasty = new RedisKnownImages(connection(), HOLDER, scope, 86, {}, () => now);
		await hasty.remember([
			{ md5: md5(0), hashcode: 'h0' },
			{ md5: md5(5000), hashcode: 'h5000' },
		]);
		await new Promise((resolve) => setTimeout(resolve, 200));

		for (const key of await raw.keys(`*${scope}*`))
			expect(await raw.pttl(key)).toBeGreaterThan(6 * DAY);
		now += DAY;
		expect((await owner.recall(Array.from({ length: 1000 }, (_, n) => md5(n)))).size).toBe(1000);
		expect(await owner.recall([md5(5000)])).toEqual(new Map());
	});

	it('removes expired entries 1000 at a time while it keeps being written', async () => {
		let now = Date.now();
		const scope = randomBytes(8).toString('hex');
		const memory = new RedisKnownImages(connection(), HOLDER, scope, DAY, {}, () => now);
		await memory.remember(
			Array.from({ length: 1500 }, (_, n) => ({ md5: md5(n), hashcode: `h${n}` })),
		);
		now += 2 * DAY;

		await memory.remember([{ md5: md5(10_000), hashcode: 'new' }]);
		expect(await raw.hlen(`n8n-nodes-product-data-integration:images:${scope}`)).toBe(501);
		await memory.remember([{ md5: md5(10_001), hashcode: 'newer' }]);
		expect(await raw.hlen(`n8n-nodes-product-data-integration:images:${scope}`)).toBe(2);
		expect(await raw.zcard(`n8n-nodes-product-data-integration:images:${scope}:expiry`)).toBe(2);
	});

	it("keeps a bound per password holder across its memories: the holder's memories that expire first go whole", async () => {
		const now = Date.now();
		const bounds = { entriesPerHolder: 5, memoriesPerHolder: 3 };
		const holder = randomBytes(8).toString('hex');
		const [first, second, third, fourth] = Array.from({ length: 4 }, () =>
			randomBytes(8).toString('hex'),
		);
		const memory = (scope: string, age: number) =>
			new RedisKnownImages(connection(), holder, scope, age, bounds, () => now);
		await memory(first, DAY).remember([0, 1, 2].map((n) => ({ md5: md5(n), hashcode: `h${n}` })));
		await memory(second, 2 * DAY).remember(
			[3, 4, 5].map((n) => ({ md5: md5(n), hashcode: `h${n}` })),
		);

		// 6 entries: the memory that expires first goes, never the writer's.
		expect(await raw.keys(`*${first}*`)).toEqual([]);
		expect((await memory(second, 2 * DAY).recall([3, 4, 5].map(md5))).size).toBe(3);

		await memory(third, 3 * DAY).remember([{ md5: md5(6), hashcode: 'h6' }]);
		await memory(fourth, 4 * DAY).remember([{ md5: md5(7), hashcode: 'h7' }]);
		expect((await memory(second, 2 * DAY).recall([3, 4, 5].map(md5))).size).toBe(3);
		await memory(first, 5 * DAY).remember([{ md5: md5(8), hashcode: 'h8' }]);
		// 4 memories beyond the bound of 3: the one that expires first went.
		expect(await raw.keys(`*${second}*`)).toEqual([]);
		expect((await memory(fourth, 4 * DAY).recall([md5(7)])).size).toBe(1);
	});

	it("never drops another holder's memory: 6 memories of one holder leave the other's 500 entries", async () => {
		const now = Date.now();
		const bounds = { entries: 500, entriesPerHolder: 500, memoriesPerHolder: 5 };
		const [owner, other] = [randomBytes(8).toString('hex'), randomBytes(8).toString('hex')];
		const ownerScope = randomBytes(8).toString('hex');
		// The owner's memory expires first: a bound across holders would drop it first.
		const owned = new RedisKnownImages(connection(), owner, ownerScope, DAY, bounds, () => now);
		await owned.remember(
			Array.from({ length: 500 }, (_, n) => ({ md5: md5(n), hashcode: `h${n}` })),
		);
		const otherScopes = Array.from({ length: 6 }, () => randomBytes(8).toString('hex'));
		// The other holder's memories, each trusted a minute longer than the one before.
		const othersMemory = (n: number) =>
			new RedisKnownImages(
				connection(),
				other,
				otherScopes[n],
				2 * DAY + n * 60_000,
				bounds,
				() => now,
			);
		for (let n = 0; n < 6; n++)
			await othersMemory(n).remember([{ md5: md5(1000 + n), hashcode: `o${n}` }]);
		// And beyond its entries: 500 more in its last memory.
		await othersMemory(5).remember(
			Array.from({ length: 500 }, (_, n) => ({ md5: md5(2000 + n), hashcode: `p${n}` })),
		);

		expect((await owned.recall(Array.from({ length: 500 }, (_, n) => md5(n)))).size).toBe(500);
		// What the other holder could not keep was its own: of its 6 memories, only the last is left.
		const left = await Promise.all(
			otherScopes.map(async (scope) => (await raw.keys(`*${scope}*`)).length > 0),
		);
		expect(left).toEqual([false, false, false, false, false, true]);
	});
});

describe('Image Upload with Redis', () => {
	const { emulator } = useEmulator(FAST_BUCKET);
	const node = new ProductDataIntegration();

	beforeAll(async () => {
		await setBinaryDataMode('default');
	});

	const hints = (result: RunNodeResult) =>
		(result.run.data.resultData.runData[NODE_NAME]?.at(-1)?.hints ?? []).map(
			(hint) => hint.message,
		);

	async function sync(sharing: Record<string, unknown>) {
		const item = await binaryItem(randomBytes(1000), 'a.jpg', 'image/jpeg');
		const credentials = fastCredentials(emulator, sharing);
		const parameters = {
			resource: 'image',
			operation: 'upload',
			imagesFrom: 'named',
			binaryProperties: 'data',
			options: {},
		};
		const first = await runNode({ node, parameters, items: [item], credentials });
		const posts = emulator.stats().requests['POST /api/images'] ?? 0;
		const again = await runNode({ node, parameters, items: [item], credentials });
		expect(first.error).toBeUndefined();
		expect(again.error).toBeUndefined();
		expect(emulator.stats().requests['POST /api/images'] ?? 0).toBe(posts);
		return { first, again };
	}

	it('keeps the images in the Redis the account shares its rate limit through, without a hint', async () => {
		const before = (await raw.keys('n8n-nodes-product-data-integration:images:*')).length;
		const { first, again } = await sync({
			rateLimitSharing: 'redis',
			redisHost: '127.0.0.1',
			redisPort: redis.port,
			redisPassword: PASSWORD,
		});

		expect(hints(first)).toEqual([]);
		expect(again.output[0][0].json.known).toBe(true);
		expect((await raw.keys('n8n-nodes-product-data-integration:images:*')).length).toBe(before + 2);
	});

	it('works from process memory when that Redis cannot be asked, and says so', async () => {
		const port = await freePort();
		const { first, again } = await sync({
			rateLimitSharing: 'redis',
			redisHost: '127.0.0.1',
			redisPort: port,
		});

		expect(hints(first)).toEqual(
			expect.arrayContaining([
				expect.stringMatching(
					/^Redis could not be asked for the known images \((?!The shared rate limit).*remembered in this n8n process only/,
				),
			]),
		);
		expect(again.output[0][0].json.known).toBe(true);
		await storeFor({ host: '127.0.0.1', port, db: 0 }).close();
	});

	it('Forget Known Images fails when that Redis cannot be asked, instead of forgetting in this process only', async () => {
		const port = await freePort();
		const credentials = fastCredentials(emulator, {
			rateLimitSharing: 'redis',
			redisHost: '127.0.0.1',
			redisPort: port,
		});

		const result = await runNode({
			node,
			parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
			items: [{ json: {} }],
			credentials,
		});

		expect(result.error?.message).toMatch(/^The known images could not be forgotten in Redis: /);
		await storeFor({ host: '127.0.0.1', port, db: 0 }).close();
	});

	it('refuses a Look Up Again After beyond a year, naming the item, before any request', async () => {
		const item = await binaryItem(randomBytes(1000), 'a.jpg', 'image/jpeg');
		const before = emulator.stats().requests['POST /api/images'] ?? 0;
		const parameters = {
			resource: 'image',
			operation: 'upload',
			imagesFrom: 'named',
			binaryProperties: 'data',
			options: { lookUpAgainAfterDays: 1e20 },
		};

		const result = await runNode({
			node,
			parameters,
			items: [item],
			credentials: fastCredentials(emulator),
		});

		expect(result.error?.message).toBe(
			'Look Up Again After (Days) of item 0 must be a number from 0.01 to 365, not 100000000000000000000',
		);
		expect(emulator.stats().requests['POST /api/images'] ?? 0).toBe(before);
	});

	it.each([[366], [0.000001], [0]])(
		"refuses a Look Up Again After of %s days (an expression passes the field's bounds), before any request",
		async (days) => {
			const item = await binaryItem(randomBytes(1000), 'a.jpg', 'image/jpeg');
			const before = emulator.stats().requests['POST /api/images'] ?? 0;
			const parameters = {
				resource: 'image',
				operation: 'upload',
				imagesFrom: 'named',
				binaryProperties: 'data',
				options: { lookUpAgainAfterDays: days },
			};

			const result = await runNode({
				node,
				parameters,
				items: [item],
				credentials: fastCredentials(emulator),
			});

			expect(result.error?.message).toBe(
				`Look Up Again After (Days) of item 0 must be a number from 0.01 to 365, not ${days}`,
			);
			expect(emulator.stats().requests['POST /api/images'] ?? 0).toBe(before);
		},
	);
});
