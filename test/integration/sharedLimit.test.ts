import Redis from 'ioredis';
import { sleep } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import {
	GcraLimiter,
	LimiterCancelledError,
	type AcquireOptions,
	type LimiterGrant,
} from '../../nodes/shared/throttle';
import { SharedBucketStore } from '../../nodes/shared/fullEdition/bucketStore';
import { storeFor } from '../../nodes/shared/fullEdition/sharedRegistry';
import { SharedLimiter } from '../../nodes/shared/fullEdition/sharedLimiter';
import { accountKey } from '../../nodes/shared/transport/account';
import { startEmulator, type Emulator } from '../../scripts/emulator';
import { clearLoggedLines, getLoggedLines, NODE_NAME, runNode } from '../../scripts/n8n/in-process';
import { freePort } from '../../scripts/n8n/processes';
import { startRedis, type RedisServer } from '../../scripts/redis';
import { FakeClock, flush } from '../helpers/clock';
import { FAST_BUCKET, fastCredentials, useEmulator } from '../helpers/emulator';

const node = new ProductDataIntegration();
const getEnvironmentInfo = { resource: 'account', operation: 'getEnvironmentInfo', options: {} };

const { emulator } = useEmulator(FAST_BUCKET);

/** The accounts' buckets in Redis (without the penalty holds kept beside them). */
async function bucketKeys(port: number, password?: string): Promise<string[]> {
	const client = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true });
	await client.connect();
	try {
		return (await client.keys('*:bucket:*')).filter((key) => !key.endsWith(':hold'));
	} finally {
		client.disconnect();
	}
}

async function run(credentials: Record<string, unknown>, service: Emulator = emulator) {
	const result = await runNode({
		node,
		parameters: getEnvironmentInfo,
		credentials: fastCredentials(service, credentials),
	});
	expect(result.error).toBeUndefined();
	expect(result.output[0]).toHaveLength(1);
	const hints = result.run.data.resultData.runData[NODE_NAME]?.at(-1)?.hints ?? [];
	return hints.map((hint) => hint.message);
}

beforeEach(() => clearLoggedLines());

describe('queue mode (Rate Limit Sharing: Automatic)', () => {
	const saved = { ...process.env };
	let redis: RedisServer;

	beforeAll(async () => {
		redis = await startRedis({ password: 'queue-password' });
	});

	afterAll(async () => {
		process.env = saved;
		// The node's connection to that Redis, as n8n's settings describe it.
		await storeFor({
			host: '127.0.0.1',
			port: redis.port,
			db: 0,
			password: 'queue-password',
		}).close();
		await redis.stop();
	});

	test("meters the account in the queue's Redis, found from n8n's own settings", async () => {
		process.env.EXECUTIONS_MODE = 'queue';
		process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
		process.env.QUEUE_BULL_REDIS_PORT = String(redis.port);
		process.env.QUEUE_BULL_REDIS_PASSWORD = 'queue-password';
		// A long interval: the key lives a minute after this one request, however slow the machine.
		expect(await run({ leakIntervalSeconds: 60 })).toEqual([]);
		expect(await bucketKeys(redis.port, 'queue-password')).toHaveLength(1);
	});

	test('regular mode keeps the limiter in the process', async () => {
		process.env.EXECUTIONS_MODE = 'regular';
		const other = await startEmulator(FAST_BUCKET);
		try {
			const result = await runNode({
				node,
				parameters: getEnvironmentInfo,
				credentials: fastCredentials(other),
			});
			expect(result.error).toBeUndefined();
			// Only the account of the test before is in Redis.
			expect(await bucketKeys(redis.port, 'queue-password')).toHaveLength(1);
		} finally {
			await other.close();
		}
	});
});

/** Resolves once the store has connected to the Redis server started again under it. */
async function reconnected(store: SharedBucketStore): Promise<void> {
	const deadline = Date.now() + 30_000;
	while (!(await store.ready()) && Date.now() < deadline)
		await new Promise((resolve) => setTimeout(resolve, 200));
}

describe('Redis unreachable (Rate Limit Sharing: Redis)', () => {
	test('falls back to the process, says so in the log and the output, and uses Redis again once it is back', async () => {
		const port = await freePort();
		// An account of its own, whose terms no other test of this file makes stricter. Its bucket
		// counts full from the fallback on: with this capacity the booking lasts minutes (the key is
		// there after the requests, however slow the machine), while the interval keeps each wait short.
		const service = await startEmulator(FAST_BUCKET);
		const sharing = {
			rateLimitSharing: 'redis',
			redisHost: '127.0.0.1',
			redisPort: port,
			bucketCapacity: 10_000,
		};
		let redis: RedisServer | undefined;
		// The node's connection to that Redis, as the credential describes it.
		const store = storeFor({ host: '127.0.0.1', port, db: 0 });
		try {
			const hints = await run(sharing, service);
			expect(hints).toHaveLength(1);
			expect(hints[0]).toMatch(
				/shared rate limit in Redis was unavailable .*limited by this n8n process alone/,
			);
			expect(getLoggedLines().filter((line) => line.startsWith('warn:'))).toEqual([
				expect.stringMatching(/shared rate limit in Redis is unavailable.*limits its own requests/),
			]);
			// Said once in the log, not once per request.
			await run(sharing, service);
			expect(getLoggedLines().filter((line) => line.startsWith('warn:'))).toHaveLength(1);

			redis = await startRedis({ port });
			// It comes back in the background; Redis is asked again a few seconds after the failure.
			await reconnected(store);
			// The node's limiter asks Redis again a few seconds after its last failure: runs until one is served there.
			let hintsBack = await run(sharing, service);
			for (const deadline = Date.now() + 30_000; hintsBack.length > 0 && Date.now() < deadline; ) {
				await new Promise((resolve) => setTimeout(resolve, 250));
				hintsBack = await run(sharing, service);
			}
			expect(hintsBack).toEqual([]);
			expect(
				getLoggedLines().some((line) => line.startsWith('info:') && /available again/.test(line)),
			).toBe(true);
			expect(await bucketKeys(port)).toHaveLength(1);
		} finally {
			await store.close();
			await redis?.stop();
			await service.close();
		}
	}, 60_000);
});

describe("settings that cannot be right, in a node's run", () => {
	test('a Redis Host with a user and password in it: the node works on, and neither its hint nor the log repeats them', async () => {
		const hints = await run({
			rateLimitSharing: 'redis',
			redisHost: 'limiter:s3cr3t-pw@127.0.0.1',
			redisPort: await freePort(),
		});
		expect(hints).toEqual([
			expect.stringMatching(/Redis Host of the credential must be a host name or IP address alone/),
		]);
		const said = [...hints, ...getLoggedLines()].join('\n');
		expect(said).not.toContain('s3cr3t-pw');
		expect(said).not.toContain('limiter:');
	});

	test('a Bucket Capacity beyond its range fails the run with an error naming the field', async () => {
		const result = await runNode({
			node,
			parameters: getEnvironmentInfo,
			credentials: fastCredentials(emulator, { bucketCapacity: 2_000_000 }),
		});
		expect(result.error?.message).toMatch(
			/The credential's Bucket Capacity must be a whole number from 1 to 10000, not 2000000/,
		);
	});
});

describe('the schedule, handed between Redis and the process', () => {
	// Long intervals: the tests look at the schedule, never sleep through it.
	const TERMS = { capacity: 3, intervalMs: 60_000 };
	// Requests leave 1 % slower than the service drains (one per 1.01 leak intervals), so jitter never lands one on a full bucket.
	const EMISSION = TERMS.intervalMs * 1.01;
	let accounts = 0;

	/** A shared limiter whose own limiter runs on `clock`, with a store of Redis on `port`. */
	function sharedLimiter(port: number, clock: FakeClock) {
		const store = new SharedBucketStore({ host: '127.0.0.1', port, db: 0 });
		const account = accountKey(`http://127.0.0.1:1/handed-${++accounts}-${Date.now()}`, 'someone');
		const limiter = new SharedLimiter(
			new GcraLimiter(TERMS, clock),
			store.bucket(account, TERMS, sleep),
			() => clock.now(),
		);
		return { store, limiter, account };
	}

	/** Starts acquire() while Redis answers; resolves with the wait Redis handed out, the request cancelled. */
	async function reservedWait(limiter: SharedLimiter): Promise<unknown> {
		const cancel = new AbortController();
		let reserved!: (waitMs: unknown) => void;
		const reservation = new Promise((resolve) => (reserved = resolve));
		const logger = {
			debug: (_message: string, meta?: Record<string, unknown>) => reserved(meta?.expectedWaitMs),
		};
		const grant: Promise<LimiterGrant> = limiter.acquire({ signal: cancel.signal, logger });
		// A bucket with room would grant at once, without a wait to tell.
		const outcome = await Promise.race([reservation, grant.then(() => 'granted at once')]);
		cancel.abort();
		await grant.catch((error: unknown) => expect(error).toBeInstanceOf(LimiterCancelledError));
		return outcome;
	}

	/** Starts acquire(); `served` resolves once the request is in the process's own limiter. */
	function acquireWithoutRedis(limiter: SharedLimiter, options: AcquireOptions = {}) {
		let served!: () => void;
		const inLocalLimiter = new Promise<void>((resolve) => (served = resolve));
		const grant = limiter.acquire({ ...options, notice: () => served() });
		return { grant, inLocalLimiter };
	}

	test('without Redis the process counts the bucket full: one request per interval, no burst', async () => {
		const clock = new FakeClock();
		const { store, limiter } = sharedLimiter(await freePort(), clock);
		try {
			const start = clock.now();
			const granted: number[] = [];
			const requests = [acquireWithoutRedis(limiter), acquireWithoutRedis(limiter)];
			await Promise.all(requests.map((request) => request.inLocalLimiter));
			const done = Promise.all(
				requests.map((request) => request.grant.then(() => granted.push(clock.now() - start))),
			);
			await flush();
			// Other processes may have filled the bucket: nothing goes at once.
			expect(granted).toEqual([]);
			await clock.advance(2 * EMISSION);
			await done;
			expect(granted).toEqual([Math.ceil(EMISSION), Math.ceil(2 * EMISSION)]);
		} finally {
			await store.close();
		}
	});

	/**
	 * The process sends one request alone (its own limiter counts the bucket full: it goes after an
	 * interval), then Redis comes back empty; `meanwhile` runs once Redis answers again, then the
	 * process's next request reserves its slot there: the wait Redis hands out, or 'granted at once'.
	 */
	async function waitBackInRedis(
		meanwhile: (account: string, port: number) => Promise<void> = async () => {},
	) {
		const clock = new FakeClock();
		const port = await freePort();
		const { store, limiter, account } = sharedLimiter(port, clock);
		const redis = await startRedis({ port });
		await redis.stop();
		try {
			const first = acquireWithoutRedis(limiter);
			await first.inLocalLimiter;
			await clock.advance(EMISSION);
			await first.grant;
			const again = await startRedis({ port });
			try {
				await reconnected(store);
				await meanwhile(account, port);
				// Redis is asked again once the fallback's pause is over.
				await clock.advance(5000);
				return await reservedWait(limiter);
			} finally {
				await again.stop();
			}
		} finally {
			await store.close();
		}
	}

	test('back in Redis, the process adds what it sent alone, not its guess of what the others sent', async () => {
		// Redis knows what the others sent (here nothing): one request of this process leaves room.
		expect(await waitBackInRedis()).toBe('granted at once');
	}, 60_000);

	test('back in Redis, what the process sent alone counts: no burst into a bucket the others filled', async () => {
		const waitMs = await waitBackInRedis(async (account, port) => {
			// Another process takes two of the three slots while this one is still on its own.
			const other = new SharedBucketStore({ host: '127.0.0.1', port, db: 0 });
			try {
				const bucket = other.bucket(account, TERMS, sleep);
				for (let request = 0; request < 2; request++) await (await bucket.acquire()).settle();
			} finally {
				await other.close();
			}
		});
		// The bucket is full with the request this process sent alone: the next waits for it to leak.
		expect(typeof waitMs).toBe('number');
		expect(waitMs as number).toBeGreaterThan(EMISSION / 2);
	}, 60_000);

	test('without Redis the process goes on from the schedule it last saw there, when that is fuller than full', async () => {
		const clock = new FakeClock();
		const port = await freePort();
		const redis = await startRedis({ port });
		const { store, limiter, account } = sharedLimiter(port, clock);
		const other = new SharedBucketStore({ host: '127.0.0.1', port, db: 0 });
		try {
			// Another process's request was refused: the bucket is held full ten intervals more.
			await other.bucket(account, TERMS, sleep).penalize(10 * EMISSION);
			// This process sees so with a reservation of its own.
			expect(await reservedWait(limiter)).toBeGreaterThan(9 * EMISSION);
			await redis.stop();
			const start = clock.now();
			const request = acquireWithoutRedis(limiter);
			await request.inLocalLimiter;
			let grantedAt = 0;
			const granted = request.grant.then(() => (grantedAt = clock.now() - start));
			// A full bucket would let it go after one interval; what is booked goes first.
			await clock.advance(9 * EMISSION);
			expect(grantedAt).toBe(0);
			await clock.advance(5 * EMISSION);
			await granted;
			expect(grantedAt).toBeGreaterThan(9 * EMISSION);
		} finally {
			await other.close();
			await store.close();
			await redis.stop();
		}
	}, 60_000);
});
