/**
 * What the shared bucket does when Redis does not behave: replies that are not the script's,
 * connections that go silent without closing, a database the server lacks, a request cancelled
 * while the connection is being made.
 */
import Redis from 'ioredis';
import { sleep } from 'n8n-workflow';

import { LimiterCancelledError } from '../../nodes/shared/throttle';
import {
	SharedBucketStore,
	RedisUnavailableError,
	sharedBucketKey,
	type RedisConnection,
} from '../../nodes/shared/fullEdition/bucketStore';
import { accountKey } from '../../nodes/shared/transport/account';
import { startRedis, type RedisServer } from '../../scripts/redis';
import {
	startMuteRedis,
	startScriptedRedis,
	startSilencingProxy,
	type Reply,
	type WireServer,
} from '../helpers/redisWire';

const SLOW = { capacity: 3, intervalMs: 10_000 };
// Requests leave 1 % slower than the service drains (one per 1.01 leak intervals), so jitter never lands one on a full bucket.
const EMISSION = SLOW.intervalMs * 1.01;
const TOLERANCE = (SLOW.capacity - 1) * EMISSION;

let redis: RedisServer;
const cleanups: Array<() => Promise<void>> = [];
let keyNumber = 0;

function store(connection: Partial<RedisConnection> & { port: number }): SharedBucketStore {
	const created = new SharedBucketStore({ host: '127.0.0.1', db: 0, ...connection });
	cleanups.push(() => created.close());
	return created;
}

async function scripted(script: (command: string[]) => Reply | undefined): Promise<WireServer> {
	const server = await startScriptedRedis(script);
	cleanups.push(() => server.close());
	return server;
}

function freshKey(): string {
	keyNumber++;
	return sharedBucketKey(
		accountKey(`http://127.0.0.1:1/replies-${keyNumber}-${Date.now()}`, 'user'),
	);
}

beforeAll(async () => {
	redis = await startRedis();
});

afterEach(async () => {
	await Promise.all(cleanups.splice(0).map(async (cleanup) => await cleanup()));
});

afterAll(async () => {
	await redis?.stop();
});

describe('replies that are not what the scripts return mean "Redis unavailable"', () => {
	const notReservations: Array<[string, Reply]> = [
		['not an array', 42],
		['an error string in place of the array', 'OK'],
		['an empty array', []],
		['too few values', ['0.000', '0.000']],
		['NaN', ['nan', '0.000', '1732400000000.000']],
		["integers instead of the script's decimals", [0, 0, 1732400000000]],
		['an empty string', ['', '0.000', '1732400000000.000']],
		['a negative wait', ['-5.000', '0.000', '1732400000000.000']],
		['a wait of more than a day', ['90000000.000', '0.000', '1732400000000.000']],
		[
			'a lead beyond the burst tolerance',
			['0.000', `${(TOLERANCE + 1000).toFixed(3)}`, '1732400000000.000'],
		],
		['a nested array', [['0.000'], '0.000', '1732400000000.000']],
		['null', null],
	];

	test.each(notReservations)('a reservation answered with %s', async (_, reply) => {
		const server = await scripted(() => reply);
		const error = await store({ port: server.port })
			.reserve(freshKey(), EMISSION, TOLERANCE)
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(RedisUnavailableError);
		expect((error as Error).message).toMatch(
			/^Redis answered with something else than the script returns$/,
		);
	});

	test('a reservation as the script writes it is read', async () => {
		const server = await scripted(() => ['1500.250', '0.000', '1732400000000.000']);
		await expect(
			store({ port: server.port }).reserve(freshKey(), EMISSION, TOLERANCE),
		).resolves.toEqual({
			waitMs: 1500.25,
			leadMs: 0,
			reservedFrom: '1732400000000.000',
		});
	});

	test.each<[string, Reply]>([
		['OK', 'OK'],
		['0', 0],
		['an array', [1]],
	])('a penalty answered with %s', async (_, reply) => {
		const server = await scripted(() => reply);
		await expect(
			store({ port: server.port }).push(freshKey(), { atLeastMs: 1000, penalty: true }),
		).rejects.toBeInstanceOf(RedisUnavailableError);
	});

	test('after such a reply the connection is replaced: the next command goes over a new one', async () => {
		let replies = 0;
		const server = await scripted(() =>
			replies++ === 0 ? [] : ['0.000', '0.000', '1732400000000.000'],
		);
		const flaky = store({ port: server.port });
		await expect(flaky.reserve(freshKey(), EMISSION, TOLERANCE)).rejects.toBeInstanceOf(
			RedisUnavailableError,
		);
		await expect(flaky.reserve(freshKey(), EMISSION, TOLERANCE)).resolves.toMatchObject({
			waitMs: 0,
		});
		expect(server.connections()).toBe(2);
	});
});

describe('a connection that goes silent without closing', () => {
	test('is dropped at the first command that times out, and the next command connects anew', async () => {
		const proxy = await startSilencingProxy(redis.port);
		cleanups.push(() => proxy.close());
		const behindNat = store({ port: proxy.port });
		await behindNat.reserve(freshKey(), EMISSION, TOLERANCE);
		expect(proxy.connections()).toBe(1);
		proxy.silenceOpenConnections();
		const error = await behindNat
			.reserve(freshKey(), EMISSION, TOLERANCE)
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(RedisUnavailableError);
		expect((error as Error).message).toMatch(/timed out/i);
		// Redis answers new connections all along: the store uses one at once.
		await expect(behindNat.reserve(freshKey(), EMISSION, TOLERANCE)).resolves.toMatchObject({
			waitMs: 0,
		});
		expect(proxy.connections()).toBe(2);
	});
});

describe('the database', () => {
	test('one the server lacks is said, not replaced by database 0', async () => {
		const missing = store({ port: redis.port, db: 99 });
		const key = freshKey();
		const error = await missing
			.reserve(key, EMISSION, TOLERANCE)
			.catch((caught: unknown) => caught);
		expect(error).toBeInstanceOf(RedisUnavailableError);
		expect((error as Error).message).toMatch(/Redis has no database 99 .*Redis Database Number/);
		const client = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
		await client.connect();
		try {
			expect(await client.exists(key)).toBe(0);
		} finally {
			client.disconnect();
		}
	});

	test('one the server has keeps the buckets', async () => {
		const key = freshKey();
		await store({ port: redis.port, db: 5 }).reserve(key, EMISSION, TOLERANCE);
		const client = new Redis({ host: '127.0.0.1', port: redis.port, db: 5, lazyConnect: true });
		await client.connect();
		try {
			expect(await client.exists(key)).toBe(1);
		} finally {
			client.disconnect();
		}
	});
});

test('a request cancelled while the connection is being made stops at once, not when connecting ends', async () => {
	// A server that takes connections and never answers: connecting would end only at its timeout.
	const server = await startMuteRedis();
	cleanups.push(() => server.close());
	const hanging = store({ port: server.port, password: 'secret' });
	const stop = new AbortController();
	const acquired = hanging.bucket(freshKey(), SLOW, sleep).acquire({ signal: stop.signal });
	await new Promise((resolve) => setTimeout(resolve, 50));
	stop.abort();
	await expect(acquired).rejects.toBeInstanceOf(LimiterCancelledError);
});
