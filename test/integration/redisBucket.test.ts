import Redis from 'ioredis';
import { sleep } from 'n8n-workflow';

import {
	SharedBucketStore,
	RedisUnavailableError,
	sharedBucketKey,
	type RedisConnection,
} from '../../nodes/shared/fullEdition/bucketStore';
import { LimiterCancelledError } from '../../nodes/shared/throttle';
import { accountKey } from '../../nodes/shared/transport/account';
import { startRedis, type RedisServer } from '../../scripts/redis';

const PASSWORD = 'redis-test-password';
// Long intervals: reservations are checked by the waits Redis hands out, not by sleeping through them.
const SLOW = { capacity: 3, intervalMs: 10_000 };
// Requests leave 1 % slower than the service drains (one per 1.01 leak intervals), so jitter never lands one on a full bucket.
const EMISSION = SLOW.intervalMs * 1.01;

let redis: RedisServer;
const stores: SharedBucketStore[] = [];
let keyNumber = 0;

function connection(overrides: Partial<RedisConnection> = {}): RedisConnection {
	return { host: '127.0.0.1', port: redis.port, db: 0, password: PASSWORD, ...overrides };
}

function store(overrides: Partial<RedisConnection> = {}): SharedBucketStore {
	const created = new SharedBucketStore(connection(overrides));
	stores.push(created);
	return created;
}

/** A fresh account for each test: its own key, so tests do not see each other's reservations. */
function freshAccount(): string {
	keyNumber++;
	return accountKey(`http://127.0.0.1:1/${keyNumber}-${Date.now()}`, `user-${keyNumber}`);
}

async function rawClient(): Promise<Redis> {
	const client = new Redis({
		host: '127.0.0.1',
		port: redis.port,
		password: PASSWORD,
		lazyConnect: true,
	});
	await client.connect();
	return client;
}

beforeAll(async () => {
	redis = await startRedis({ password: PASSWORD, tls: true });
});

afterEach(async () => {
	await Promise.all(stores.splice(0).map((created) => created.close()));
});

afterAll(async () => {
	await redis?.stop();
});

describe('reservations', () => {
	test('a burst of capacity goes at once, then one per interval, first come first served across connections', async () => {
		const account = freshAccount();
		const first = store();
		const second = store();
		const waits: number[] = [];
		for (let i = 0; i < 6; i++) {
			const { waitMs } = await (i % 2 === 0 ? first : second).reserve(
				sharedBucketKey(account),
				EMISSION,
				(SLOW.capacity - 1) * EMISSION,
			);
			waits.push(waitMs);
		}
		expect(waits.slice(0, 3)).toEqual([0, 0, 0]);
		// The rest: one interval apart, each a little less than its multiple as time went on.
		for (const [index, wait] of waits.slice(3).entries()) {
			expect(wait).toBeGreaterThan((index + 1) * EMISSION - 1000);
			expect(wait).toBeLessThanOrEqual((index + 1) * EMISSION);
		}
	});

	test('acquire() sleeps until its slot: a burst of the capacity, then one an interval', async () => {
		const account = freshAccount();
		const terms = { capacity: 2, intervalMs: 100 };
		const buckets = [store().bucket(account, terms, sleep), store().bucket(account, terms, sleep)];
		const started = Date.now();
		const granted: number[] = [];
		await Promise.all(
			Array.from({ length: 5 }, async (_, index) => {
				await buckets[index % 2].acquire();
				granted.push(Date.now() - started);
			}),
		);
		granted.sort((a, b) => a - b);
		// Two at once, then the fifth no earlier than three intervals later.
		expect(granted[4]).toBeGreaterThanOrEqual(3 * 100 * 1.01 - 5);
	});

	test('a cancelled wait gives its slot back and rejects with the cancellation error', async () => {
		const account = freshAccount();
		const bucket = store().bucket(account, SLOW, sleep);
		for (let i = 0; i < SLOW.capacity; i++) await bucket.acquire();
		const controller = new AbortController();
		const waiting = bucket.acquire({ signal: controller.signal });
		setTimeout(() => controller.abort(), 50);
		await expect(waiting).rejects.toBeInstanceOf(LimiterCancelledError);
		const { waitMs } = await store().reserve(
			sharedBucketKey(account),
			EMISSION,
			(SLOW.capacity - 1) * EMISSION,
		);
		// The next one gets the slot the cancelled one had, not the one after it.
		expect(waitMs).toBeLessThanOrEqual(EMISSION);
		expect(waitMs).toBeGreaterThan(EMISSION - 2000);
	});

	test('a cancelled wait gives back no slot that a penalty since holds full', async () => {
		const account = freshAccount();
		const bucket = store().bucket(account, SLOW, sleep);
		for (let i = 0; i < SLOW.capacity; i++) await bucket.acquire();
		const controller = new AbortController();
		let reserved!: () => void;
		const inSchedule = new Promise<void>((resolve) => (reserved = resolve));
		const waiting = bucket.acquire({
			signal: controller.signal,
			logger: { debug: () => reserved() },
		});
		await inSchedule;
		// Another process's request was refused meanwhile: the bucket counts full for three intervals.
		const penaltyMs = 3 * EMISSION;
		await store().bucket(account, SLOW, sleep).penalize(penaltyMs);
		controller.abort();
		await expect(waiting).rejects.toBeInstanceOf(LimiterCancelledError);
		const { waitMs } = await store().reserve(
			sharedBucketKey(account),
			EMISSION,
			(SLOW.capacity - 1) * EMISSION,
		);
		// The penalty stands whole: the cancelled slot lay in the time it holds full.
		expect(waitMs).toBeGreaterThan(penaltyMs - 2000);
		expect(waitMs).toBeLessThanOrEqual(penaltyMs);
	});

	test('a slot further ahead than 15 minutes is handed back and the request fails, naming the wait', async () => {
		const account = freshAccount();
		const bucket = store().bucket(account, SLOW, sleep);
		// The service asked for 20 minutes: the bucket counts full until then.
		await bucket.penalize(20 * 60_000);
		await expect(bucket.acquire()).rejects.toThrow(
			/would wait 20 min for the account's rate limit .*at most 15 min/,
		);
		const { waitMs } = await store().reserve(
			sharedBucketKey(account),
			EMISSION,
			(SLOW.capacity - 1) * EMISSION,
		);
		// The refused request booked nothing: the next one waits for the penalty alone.
		expect(waitMs).toBeLessThanOrEqual(20 * 60_000);
		expect(waitMs).toBeGreaterThan(20 * 60_000 - 2000);
	});

	test('an aborted signal takes no slot', async () => {
		const account = freshAccount();
		const controller = new AbortController();
		controller.abort();
		await expect(
			store().bucket(account, SLOW, sleep).acquire({ signal: controller.signal }),
		).rejects.toBeInstanceOf(LimiterCancelledError);
		const client = await rawClient();
		try {
			expect(await client.exists(sharedBucketKey(account))).toBe(0);
		} finally {
			client.disconnect();
		}
	});

	test('a penalty holds every process back for Retry-After, then one per interval', async () => {
		const account = freshAccount();
		await store().bucket(account, SLOW, sleep).penalize(3000);
		const other = store();
		const { waitMs: first } = await other.reserve(
			sharedBucketKey(account),
			EMISSION,
			(SLOW.capacity - 1) * EMISSION,
		);
		const { waitMs: second } = await other.reserve(
			sharedBucketKey(account),
			EMISSION,
			(SLOW.capacity - 1) * EMISSION,
		);
		expect(first).toBeGreaterThan(2000);
		expect(first).toBeLessThanOrEqual(3000);
		// One interval later, less the time between the two calls.
		expect(second - first).toBeGreaterThan(EMISSION - 100);
		expect(second - first).toBeLessThanOrEqual(EMISSION);
	});

	test('a request that reaches the service late in an idle bucket moves the schedule by its lateness', async () => {
		const account = freshAccount();
		const terms = { capacity: 1, intervalMs: 1000 };
		const bucket = store().bucket(account, terms, sleep);
		const grant = await bucket.acquire();
		await new Promise((resolve) => setTimeout(resolve, 400));
		await grant.settle();
		const client = await rawClient();
		try {
			const [seconds, micros] = await client.time();
			const now = Number(seconds) * 1000 + Number(micros) / 1000;
			const tat = Number(await client.get(sharedBucketKey(account)));
			// Granted at t0 with TAT t0 + 1010; seen at about t0 + 400, so TAT about t0 + 1410.
			expect(tat - now).toBeGreaterThan(1010 - 500 + 300);
		} finally {
			client.disconnect();
		}
	});
});

describe('keys', () => {
	test('are named by a digest of the account and expire a little after the bucket is empty again', async () => {
		const username = 'someone@example.com';
		const account = accountKey('https://integration.example.com', username);
		const bucket = store().bucket(account, SLOW, sleep);
		await bucket.acquire();
		await bucket.acquire();
		const client = await rawClient();
		try {
			const keys = await client.keys('*');
			const key = keys.find((name) => name.endsWith(account));
			expect(account).toMatch(/^[0-9a-f]{64}$/);
			expect(key).toBe(`n8n-nodes-product-data-integration:bucket:${account}`);
			expect(keys.join(' ')).not.toContain(username);
			expect(keys.join(' ')).not.toContain('integration.example.com');
			const ttl = await client.pttl(sharedBucketKey(account));
			// Two requests in: empty again after two emission intervals, plus a second of margin.
			expect(ttl).toBeGreaterThan(2 * EMISSION);
			expect(ttl).toBeLessThanOrEqual(2 * EMISSION + 1000);
		} finally {
			client.disconnect();
		}
	});
});

describe('connections', () => {
	test('a wrong password makes the store unavailable, with the reason', async () => {
		const wrong = store({ password: 'not-the-password' });
		const error = await wrong
			.bucket(freshAccount(), SLOW, sleep)
			.acquire()
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(RedisUnavailableError);
		expect((error as Error).message).toMatch(/WRONGPASS|invalid|password/i);
		expect((error as Error).message).not.toContain('not-the-password');
	});

	test('TLS with the server certificate verified', async () => {
		const secure = store({ port: redis.tlsPort, tls: { ca: redis.ca, servername: 'localhost' } });
		const grant = await secure.bucket(freshAccount(), SLOW, sleep).acquire();
		await grant.settle();
	});

	test('TLS refuses a certificate it cannot verify', async () => {
		const unverified = store({ port: redis.tlsPort, tls: { servername: 'localhost' } });
		await expect(unverified.bucket(freshAccount(), SLOW, sleep).acquire()).rejects.toBeInstanceOf(
			RedisUnavailableError,
		);
	});

	test('unreachable, then reachable again: unavailable at once, usable once Redis is back', async () => {
		const server = await startRedis();
		const port = server.port;
		await server.stop();
		const flaky = store({ port, password: undefined });
		const bucket = flaky.bucket(freshAccount(), SLOW, sleep);
		await expect(bucket.acquire()).rejects.toBeInstanceOf(RedisUnavailableError);
		const again = await startRedis({ port });
		try {
			const deadline = Date.now() + 20_000;
			while (!(await flaky.ready()) && Date.now() < deadline) {
				await new Promise((resolve) => setTimeout(resolve, 100));
			}
			await (await bucket.acquire()).settle();
		} finally {
			await flaky.close();
			await again.stop();
		}
	});
});
