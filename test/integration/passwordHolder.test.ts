import { randomBytes } from 'node:crypto';
import { request } from 'node:http';

import Redis from 'ioredis';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { closeStores } from '../../nodes/shared/fullEdition/sharedRegistry';
import { DEFAULT_ACCOUNT } from '../../scripts/emulator';
import { binaryItem, emulatorCredentials, runNode } from '../../scripts/n8n/in-process';
import { startRedis, type RedisServer } from '../../scripts/redis';
import { customRateLimit, FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { listenLocal } from '../helpers/server';

/*
 * What the nodes keep per account (known images, the rate-limit terms a credential declares) belongs
 * to whoever holds the account's password: a credential with the same Base URL and username but
 * another password neither reads nor changes it.
 */

jest.setTimeout(60_000);

const node = new ProductDataIntegration();
const UPLOAD = {
	resource: 'image',
	operation: 'upload',
	imagesFrom: 'named',
	binaryProperties: 'data',
	options: {},
};
const FORGET = { resource: 'image', operation: 'forgetKnownImages', options: {} };
const FAST = customRateLimit(FAST_BUCKET);

const { emulator } = useEmulator({
	...FAST_BUCKET,
	accounts: [
		DEFAULT_ACCOUNT,
		{ ...DEFAULT_ACCOUNT, username: 'alice', password: 'alice-password' },
		{ ...DEFAULT_ACCOUNT, username: 'ALICE', password: 'upper-alice-password' },
	],
});
let redis: RedisServer;
let raw: Redis;

beforeAll(async () => {
	redis = await startRedis();
	raw = new Redis({ host: '127.0.0.1', port: redis.port });
});

afterAll(async () => {
	raw.disconnect();
	await closeStores();
	await redis.stop();
});

const posts = () => emulator.stats().requests['POST /api/images'] ?? 0;

const placesToRemember: Array<[string, Record<string, unknown>]> = [
	['in this process', { rateLimitSharing: 'process' }],
	['in Redis', { rateLimitSharing: 'redis', redisHost: '127.0.0.1', redisPort: 0 }],
];

describe.each(placesToRemember)('known images remembered %s', (_place, sharing) => {
	const credentials = (overrides: Record<string, unknown> = {}) =>
		emulatorCredentials(emulator, {
			...FAST,
			...sharing,
			...('redisPort' in sharing ? { redisPort: redis.port } : {}),
			...overrides,
		});

	it('are not answered to a credential with another password: its upload spends a request and gets 401', async () => {
		const item = await binaryItem(randomBytes(1000), 'a.jpg', 'image/jpeg');
		const owner = await runNode({
			node,
			parameters: UPLOAD,
			items: [item],
			credentials: credentials(),
		});
		expect(owner.error).toBeUndefined();
		const before = posts();

		const stranger = await runNode({
			node,
			parameters: UPLOAD,
			items: [item],
			credentials: credentials({ password: 'not-the-password' }),
		});

		expect(stranger.error?.message).toMatch(/^Authorization has been denied/);
		expect(posts()).toBe(before + 1);
		// The owner still has it, without a request.
		const again = await runNode({
			node,
			parameters: UPLOAD,
			items: [item],
			credentials: credentials(),
		});
		expect(again.output[0][0].json.known).toBe(true);
		expect(posts()).toBe(before + 1);
	});

	it('cannot be forgotten, nor counted, by a credential with another password', async () => {
		const item = await binaryItem(randomBytes(1000), 'a.jpg', 'image/jpeg');
		await runNode({ node, parameters: UPLOAD, items: [item], credentials: credentials() });

		const stranger = await runNode({
			node,
			parameters: FORGET,
			items: [{ json: {} }],
			credentials: credentials({ password: 'not-the-password' }),
		});

		expect(stranger.output[0][0].json.forgotten).toBe(0);
		const before = posts();
		const again = await runNode({
			node,
			parameters: UPLOAD,
			items: [item],
			credentials: credentials(),
		});
		expect(again.output[0][0].json.known).toBe(true);
		expect(posts()).toBe(before);
	});

	it('are kept per username as written: alice is never handed what ALICE uploaded', async () => {
		const item = await binaryItem(randomBytes(1000), 'a.jpg', 'image/jpeg');
		const upper = await runNode({
			node,
			parameters: UPLOAD,
			items: [item],
			credentials: credentials({ username: 'ALICE', password: 'upper-alice-password' }),
		});
		expect(upper.error).toBeUndefined();
		const before = posts();

		const lower = await runNode({
			node,
			parameters: UPLOAD,
			items: [item],
			credentials: credentials({ username: 'alice', password: 'alice-password' }),
		});

		expect(lower.error).toBeUndefined();
		expect(lower.output[0][0].json.known).not.toBe(true);
		expect(posts()).toBe(before + 1);
	});
});

describe("the account's rate-limit terms", () => {
	it('are not changed by a credential with another password (Custom Rate Limit 1 per 900 s)', async () => {
		const owner = emulatorCredentials(emulator, { ...FAST, rateLimitSharing: 'process' });
		const strict = {
			customRateLimit: true,
			bucketCapacity: 1,
			leakIntervalSeconds: 900,
			rateLimitSharing: 'process',
		};
		const item = () => ({ json: {} });
		const environmentInfo = { resource: 'account', operation: 'getEnvironmentInfo' };
		expect(
			(await runNode({ node, parameters: environmentInfo, items: [item()], credentials: owner }))
				.error,
		).toBeUndefined();

		const stranger = await runNode({
			node,
			parameters: environmentInfo,
			items: [item()],
			credentials: emulatorCredentials(emulator, { ...strict, password: 'not-the-password' }),
		});
		expect(stranger.error?.message).toMatch(/^Authorization has been denied/);

		for (let run = 0; run < 3; run++) {
			const result = await runNode({
				node,
				parameters: environmentInfo,
				items: [item()],
				credentials: owner,
			});
			expect(result.error).toBeUndefined();
		}
	});

	it('are not changed by a wrong password that a proxy in front answers 404 before any login check', async () => {
		let beforeLogin = true;
		const proxy = await listenLocal((req, res) => {
			if (beforeLogin) {
				res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
				return;
			}
			const forwarded = request(
				new URL(req.url ?? '/', emulator.url),
				{ method: req.method, headers: req.headers },
				(answer) => {
					res.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(res);
				},
			);
			req.pipe(forwarded);
		});
		try {
			const environmentInfo = { resource: 'account', operation: 'getEnvironmentInfo' };
			const stranger = await runNode({
				node,
				parameters: environmentInfo,
				items: [{ json: {} }],
				credentials: emulatorCredentials(proxy, {
					customRateLimit: true,
					bucketCapacity: 1,
					leakIntervalSeconds: 900,
					rateLimitSharing: 'process',
					password: 'not-the-password',
				}),
			});
			expect(stranger.error).toBeDefined();

			beforeLogin = false;
			const owner = emulatorCredentials(proxy, { ...FAST, rateLimitSharing: 'process' });
			for (let run = 0; run < 3; run++) {
				const result = await runNode({
					node,
					parameters: environmentInfo,
					items: [{ json: {} }],
					credentials: owner,
				});
				expect(result.error).toBeUndefined();
			}
		} finally {
			await proxy.close();
		}
	});

	it('of the credential holding the password count once the service has answered it', async () => {
		const strict = emulatorCredentials(emulator, {
			customRateLimit: true,
			bucketCapacity: 1,
			leakIntervalSeconds: 900,
			rateLimitSharing: 'process',
			username: 'alice',
			password: 'alice-password',
		});
		const environmentInfo = { resource: 'account', operation: 'getEnvironmentInfo' };
		expect(
			(
				await runNode({
					node,
					parameters: environmentInfo,
					items: [{ json: {} }],
					credentials: strict,
				})
			).error,
		).toBeUndefined();

		const next = await runNode({
			node,
			parameters: environmentInfo,
			items: [{ json: {} }],
			credentials: strict,
		});

		expect(next.error?.message).toMatch(/would wait more than 15 min/);
	});
});

describe('the Redis keys of known images', () => {
	it('hold neither the username nor the password readable', async () => {
		const keys = await raw.keys('n8n-nodes-product-data-integration:images:*');
		expect(keys.length).toBeGreaterThan(0);
		for (const key of keys) expect(key).not.toMatch(/alice|demo|password/i);
	});
});
