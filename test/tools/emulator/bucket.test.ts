import { LeakyBuckets } from '../../../scripts/emulator/bucket';
import { call } from '../../../scripts/emulator/client';
import {
	DEFAULT_ACCOUNT,
	startEmulator,
	type Emulator,
	type EmulatorAccount,
	type EmulatorOptions,
} from '../../../scripts/emulator';

describe('LeakyBuckets', () => {
	it('admits a full burst, then exactly one request per interval', () => {
		const buckets = new LeakyBuckets(50, 5000);
		for (let i = 0; i < 50; i++) expect(buckets.take('a', 0).admitted).toBe(true);
		expect(buckets.take('a', 0)).toEqual({ admitted: false, level: 50, retryAfterMs: 5000 });
		expect(buckets.take('a', 4999)).toMatchObject({ admitted: false, retryAfterMs: 1 });
		expect(buckets.take('a', 5000)).toMatchObject({ admitted: true, level: 50 });
		expect(buckets.take('a', 5000).admitted).toBe(false);
		for (let n = 2; n <= 10; n++) {
			expect(buckets.take('a', n * 5000).admitted).toBe(true);
			expect(buckets.take('a', n * 5000).admitted).toBe(false);
		}
	});

	it('drains continuously and never below empty', () => {
		const buckets = new LeakyBuckets(3, 1000);
		buckets.take('a', 0);
		buckets.take('a', 0);
		expect(buckets.level('a', 500)).toBe(1.5);
		expect(buckets.level('a', 60_000)).toBe(0);
		for (let i = 0; i < 3; i++) expect(buckets.take('a', 60_000).admitted).toBe(true);
		expect(buckets.take('a', 60_000).admitted).toBe(false);
	});

	it('keeps one bucket per key and ignores a clock that goes backwards', () => {
		const buckets = new LeakyBuckets(1, 1000);
		expect(buckets.take('a', 10_000).admitted).toBe(true);
		expect(buckets.take('b', 10_000).admitted).toBe(true);
		expect(buckets.take('a', 5_000).admitted).toBe(false);
		expect(buckets.take('a', 10_999).admitted).toBe(false);
		expect(buckets.take('a', 11_000).admitted).toBe(true);
	});

	it('fills to a given level, clamped to the capacity', () => {
		const buckets = new LeakyBuckets(5, 1000);
		expect(buckets.fill('a', 4, 0)).toBe(4);
		expect(buckets.take('a', 0).admitted).toBe(true);
		expect(buckets.take('a', 0).admitted).toBe(false);
		expect(buckets.fill('a', 99, 0)).toBe(5);
		expect(buckets.take('a', 999).admitted).toBe(false);
	});
});

describe('rate limit over HTTP', () => {
	const SECOND: EmulatorAccount = {
		username: 'second',
		password: 'second-password',
		customers: [{ serviceId: 7, externalId: null, name: 'Second' }],
	};
	let emulator: Emulator;
	let clock: number;

	async function start(options: EmulatorOptions = {}) {
		await emulator?.close();
		clock = Date.parse('2025-06-01T12:00:00Z');
		emulator = await startEmulator({
			now: () => clock,
			accounts: [DEFAULT_ACCOUNT, SECOND],
			...options,
		});
	}

	afterEach(() => emulator?.close());

	const me = (options: Parameters<typeof call>[3] = {}) =>
		call(emulator, 'GET', '/api/auth/me', options);

	it('admits 50 requests at once, refuses the 51st, then admits one per interval', async () => {
		await start();
		const burst = await Promise.all(Array.from({ length: 50 }, () => me()));
		expect(burst.map((r) => r.status)).toEqual(Array(50).fill(200));
		const refused = await me();
		expect(refused.status).toBe(429);
		expect(refused.headers['retry-after']).toBe('5');
		expect(refused.json()).toEqual({ message: expect.any(String) });

		clock += 4999;
		expect((await me()).status).toBe(429);
		clock += 1;
		expect((await me()).status).toBe(200);
		expect((await me()).status).toBe(429);
		clock += 5000;
		const next = await Promise.all([me(), me(), me()]);
		expect(next.map((r) => r.status).sort()).toEqual([200, 429, 429]);

		const stats = emulator.stats();
		expect(stats.rejected429).toBe(5);
		expect(stats.peakBucketLevel).toBe(50);
		expect(stats.requests['GET /api/auth/me']).toBe(57);
	});

	it('counts every authenticated request, whatever the route and outcome, but not refused credentials', async () => {
		await start({ bucketCapacity: 4 });
		const unauthenticated = await Promise.all(
			Array.from({ length: 10 }, () => me({ auth: false })),
		);
		expect(unauthenticated.every((r) => r.status === 401)).toBe(true);
		expect((await call(emulator, 'GET', '/api/xml/not-a-date')).status).toBe(400);
		expect((await call(emulator, 'GET', '/api/images?md5=abc')).status).toBe(404);
		expect((await call(emulator, 'GET', '/api/xml/2025-06-01', { customer: false })).status).toBe(
			401,
		);
		expect(
			(await call(emulator, 'GET', '/api/status/0f8fad5b-d9cb-469f-a165-70867728950e/done')).status,
		).toBe(404);
		expect((await me()).status).toBe(429);
		expect(emulator.stats().peakBucketLevel).toBe(4);
	});

	it('keeps a bucket per account', async () => {
		await start({ bucketCapacity: 2 });
		expect((await me()).status).toBe(200);
		expect((await me()).status).toBe(200);
		expect((await me()).status).toBe(429);
		expect((await me({ auth: SECOND, customer: false })).status).toBe(200);
	});

	it('does not process a refused upload', async () => {
		await start({ bucketCapacity: 1 });
		expect((await me()).status).toBe(200);
		const upload = await call(emulator, 'PUT', '/api/xml', { body: '<Products/>' });
		expect(upload.status).toBe(429);
		expect(emulator.stats().uploads).toBe(0);
	});

	it('rounds Retry-After up to whole seconds', async () => {
		await start({ bucketCapacity: 1, leakIntervalMs: 1500 });
		await me();
		expect((await me()).headers['retry-after']).toBe('2');
		clock += 1000;
		expect((await me()).headers['retry-after']).toBe('1');
	});

	it("answers with an HTTP date in Retry-After with '429-date'", async () => {
		await start({ bucketCapacity: 1, rateLimitAnswer: '429-date' });
		await me();
		const refused = await me();
		expect(refused.status).toBe(429);
		expect(refused.headers['retry-after']).toBe(new Date(clock + 5000).toUTCString());
	});

	it("answers 429 without Retry-After with '429-none'", async () => {
		await start({ bucketCapacity: 1, rateLimitAnswer: '429-none' });
		await me();
		const refused = await me();
		expect(refused.status).toBe(429);
		expect(refused.headers['retry-after']).toBeUndefined();
	});

	it("answers 503 with Retry-After with '503'", async () => {
		await start({ bucketCapacity: 1, rateLimitAnswer: '503' });
		await me();
		const refused = await me();
		expect(refused.status).toBe(503);
		expect(refused.headers['retry-after']).toBe('5');
		expect(emulator.stats().rejected429).toBe(1);
	});

	it('fills a bucket through the control route as another client would', async () => {
		await start();
		const fill = await call(emulator, 'POST', '/__emulator/bucket', {
			auth: false,
			customer: false,
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify({ username: DEFAULT_ACCOUNT.username, level: 49 }),
		});
		expect(fill.status).toBe(200);
		expect(fill.json()).toEqual({ username: DEFAULT_ACCOUNT.username, level: 49 });
		expect((await me()).status).toBe(200);
		expect((await me()).status).toBe(429);
		expect((await me({ auth: SECOND, customer: false })).status).toBe(200);
	});

	it('empties the buckets on reset', async () => {
		await start({ bucketCapacity: 1 });
		await me();
		expect((await me()).status).toBe(429);
		emulator.reset();
		expect((await me()).status).toBe(200);
		expect(emulator.stats()).toMatchObject({ rejected429: 0, peakBucketLevel: 1 });
	});
});
