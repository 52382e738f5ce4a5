import Redis from 'ioredis';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { storeFor } from '../../nodes/shared/throttle/redisBucket';
import { startEmulator, type Emulator } from '../../scripts/emulator';
import { clearLoggedLines, emulatorCredentials, getLoggedLines, NODE_NAME, runNode } from '../../scripts/n8n/in-process';
import { freePort } from '../../scripts/n8n/processes';
import { startRedis, type RedisServer } from '../../scripts/redis';

const node = new ProductDataIntegration();
const FAST_CREDENTIAL = { customRateLimit: true, bucketCapacity: 50, leakIntervalSeconds: 0.02 };
const getEnvironmentInfo = { resource: 'account', operation: 'getEnvironmentInfo', options: {} };

let emulator: Emulator;

async function bucketKeys(port: number, password?: string): Promise<string[]> {
	const client = new Redis({ host: '127.0.0.1', port, password, lazyConnect: true });
	await client.connect();
	try {
		return await client.keys('*:bucket:*');
	} finally {
		client.disconnect();
	}
}

async function run(credentials: Record<string, unknown>) {
	const result = await runNode({
		node,
		parameters: getEnvironmentInfo,
		credentials: emulatorCredentials(emulator, { ...FAST_CREDENTIAL, ...credentials }),
	});
	expect(result.error).toBeUndefined();
	expect(result.output[0]).toHaveLength(1);
	const hints = result.run.data.resultData.runData[NODE_NAME]?.at(-1)?.hints ?? [];
	return hints.map((hint) => hint.message);
}

beforeAll(async () => {
	emulator = await startEmulator({ bucketCapacity: 50, leakIntervalMs: 20 });
});

afterAll(async () => {
	await emulator.close();
});

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
		await storeFor({ host: '127.0.0.1', port: redis.port, db: 0, password: 'queue-password' }).close();
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
		const other = await startEmulator({ bucketCapacity: 50, leakIntervalMs: 20 });
		try {
			const result = await runNode({
				node,
				parameters: getEnvironmentInfo,
				credentials: emulatorCredentials(other, FAST_CREDENTIAL),
			});
			expect(result.error).toBeUndefined();
			// Only the account of the test before is in Redis.
			expect(await bucketKeys(redis.port, 'queue-password')).toHaveLength(1);
		} finally {
			await other.close();
		}
	});
});

describe('Redis unreachable (Rate Limit Sharing: Redis)', () => {
	test('falls back to the process, says so in the log and the output, and uses Redis again once it is back', async () => {
		const port = await freePort();
		// A long interval: the key lives a minute after these few requests, however slow the machine.
		const sharing = { rateLimitSharing: 'redis', redisHost: '127.0.0.1', redisPort: port, leakIntervalSeconds: 60 };

		const hints = await run(sharing);
		expect(hints).toHaveLength(1);
		expect(hints[0]).toMatch(/shared rate limit in Redis was unavailable .*limited by this n8n process alone/);
		expect(getLoggedLines().filter((line) => line.startsWith('warn:'))).toEqual([
			expect.stringMatching(/shared rate limit in Redis is unavailable.*limits its own requests/),
		]);
		// Said once in the log, not once per request.
		await run(sharing);
		expect(getLoggedLines().filter((line) => line.startsWith('warn:'))).toHaveLength(1);

		const redis = await startRedis({ port });
		// The node's connection to that Redis, as the credential describes it.
		const store = storeFor({ host: '127.0.0.1', port, db: 0 });
		try {
			// It comes back in the background; Redis is asked again a few seconds after the failure.
			const deadline = Date.now() + 30_000;
			while (!(await store.ready()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
			await new Promise((resolve) => setTimeout(resolve, 5000));
			expect(await run(sharing)).toEqual([]);
			expect(getLoggedLines().some((line) => line.startsWith('info:') && /available again/.test(line))).toBe(true);
			expect(await bucketKeys(port)).toHaveLength(1);
		} finally {
			await store.close();
			await redis.stop();
		}
	}, 60_000);
});
