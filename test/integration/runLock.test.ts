/**
 * Runs of one node kept apart across the n8n processes of queue mode, in the queue's Redis. Another
 * process is the package's modules loaded once more (their own maps and Redis connections), or a
 * child process that a test kills as a crashed worker.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';

import Redis from 'ioredis';
import type { IExecuteFunctions, IPollFunctions } from 'n8n-workflow';

import { RedisRunLock } from '../../nodes/shared/fullEdition/redisRunLock';
import { closeStores, storeFor } from '../../nodes/shared/fullEdition/sharedRegistry';
import { runAlone } from '../../nodes/shared/runAlone';
import type { RunLease } from '../../nodes/shared/ports';
import { freePort, sleep } from '../../scripts/n8n/processes';
import { startRedis, type RedisServer } from '../../scripts/redis';
import { fakeDateOnly } from '../helpers/clock';
import { startMuteRedis, startScriptedRedis, type Reply } from '../helpers/redisWire';

jest.setTimeout(60_000);

const PASSWORD = 'queue-password';
const KEY = /^n8n-nodes-product-data-integration:run:[0-9a-f]{64}$/;

interface Process {
	runAlone: typeof runAlone;
	closeStores: typeof closeStores;
}

const processes: Process[] = [{ runAlone, closeStores }];

/**
 * Another n8n process: the same modules loaded again, sharing nothing with this one but Redis, with
 * the edition installed as a node file installs it.
 */
async function anotherProcess(): Promise<Process> {
	let loaded: Process | undefined;
	await jest.isolateModulesAsync(async () => {
		await import('../helpers/edition');
		loaded = {
			runAlone: (await import('../../nodes/shared/runAlone')).runAlone,
			closeStores: (await import('../../nodes/shared/fullEdition/sharedRegistry')).closeStores,
		};
	});
	processes.push(loaded as Process);
	return loaded as Process;
}

afterAll(async () => {
	await Promise.all(processes.map(async (process) => await process.closeStores()));
});

/** The n8n settings of a queue-mode process whose Redis listens on `port`. */
function queueMode(port: number): void {
	process.env.EXECUTIONS_MODE = 'queue';
	process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
	process.env.QUEUE_BULL_REDIS_PORT = String(port);
	process.env.QUEUE_BULL_REDIS_PASSWORD = PASSWORD;
}

const saved = { ...process.env };
afterAll(() => {
	process.env = saved;
});

let nodeNumber = 0;

/** The context of one run of a node (each test its own node), and what it logged. */
function nodeRun(node: string, signal?: AbortSignal) {
	const { context, logged } = pollRun(node);
	return {
		context: { ...context, getExecutionCancelSignal: () => signal } as unknown as IExecuteFunctions,
		logged,
	};
}

/** The same for a trigger's poll, which has no execution to cancel. */
function pollRun(node: string) {
	const logged: string[] = [];
	const log = (level: string) => (message: string) => logged.push(`${level} ${message}`);
	const context = {
		getWorkflow: () => ({ id: 'workflow-7', active: true }),
		getNode: () => ({
			id: node,
			name: 'Upload',
			type: 'productDataIntegration',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		}),
		logger: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
	};
	return { context: context as unknown as IPollFunctions, logged };
}

const sync = { skipped: 'Another run of this node is still going on' };

const skip = { skipped: 'Skipping a poll: the previous poll of this trigger is still running' };

/** Ends the runs a failed test left going, so that their leases are not renewed on. */
const endings: Array<() => void> = [];
afterEach(() => endings.splice(0).forEach((end) => end()));

/** A run of `node` that goes on until `end()`; `running` once it runs. */
function longRun(process: Process, node: string) {
	let end: () => void = () => undefined;
	let started: () => void = () => undefined;
	const running = new Promise<void>((resolve) => (started = resolve));
	const ended = new Promise<void>((resolve) => (end = resolve));
	endings.push(end);
	let lost: AbortSignal | undefined;
	const { context, logged } = nodeRun(node);
	const result = process.runAlone(context, sync, async (signal) => {
		lost = signal;
		started();
		await ended;
		return 'first';
	});
	return { result, running, end, logged, lost: () => lost as AbortSignal };
}

/** Waits for `condition`, counting its own waits: Date may stand still (advanceClock). */
async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 15_000) {
	for (let waited = 0; !(await condition()); waited += 50) {
		if (waited > timeoutMs) throw new Error(`Timed out waiting for ${what}`);
		await sleep(50);
	}
}

describe("in the queue's Redis", () => {
	let redis: RedisServer;
	let client: Redis;

	beforeAll(async () => {
		redis = await startRedis({ password: PASSWORD });
		client = new Redis({ host: '127.0.0.1', port: redis.port, password: PASSWORD });
		queueMode(redis.port);
	});

	afterAll(async () => {
		client?.disconnect();
		await closeStores();
		await redis?.stop();
	});

	beforeEach(async () => {
		await client.flushall();
		nodeNumber++;
	});

	const node = () => `node-${nodeNumber}`;
	const runKeys = async () => await client.keys('*:run:*');

	test('a run of the same node in another process is refused while the first runs, and goes once it has ended', async () => {
		const first = longRun(processes[0], node());
		await first.running;
		const other = await anotherProcess();
		const second = jest.fn(async () => 'second');

		await expect(other.runAlone(nodeRun(node()).context, sync, second)).resolves.toBeNull();
		expect(second).not.toHaveBeenCalled();
		// Another node of the same workflow is not held back.
		expect(await other.runAlone(nodeRun(`${node()}-other`).context, sync, second)).toBe('second');

		first.end();
		expect(await first.result).toBe('first');
		expect(await runKeys()).toEqual([]);
		expect(await other.runAlone(nodeRun(node()).context, sync, second)).toBe('second');
		expect(first.logged).toEqual([]);
	});

	test("the trigger's poll in another process is skipped while the first runs", async () => {
		const first = longRun(processes[0], node());
		await first.running;
		const other = await anotherProcess();
		const poll = pollRun(node());
		const polled = jest.fn(async () => 'polled');

		expect(await other.runAlone(poll.context, skip, polled)).toBeNull();
		expect(polled).not.toHaveBeenCalled();
		expect(poll.logged).toEqual([
			'debug Skipping a poll: the previous poll of this trigger is still running',
		]);
		first.end();
		await first.result;
	});

	test('the node is one key named by a digest, neither workflow nor node id, held for a lease of 30 s', async () => {
		const first = longRun(processes[0], node());
		await first.running;
		const keys = await runKeys();
		expect(keys).toHaveLength(1);
		expect(keys[0]).toMatch(KEY);
		const stored = `${keys[0]} ${await client.get(keys[0])}`;
		expect(stored).not.toContain('workflow-7');
		expect(stored).not.toContain(node());
		const ttl = await client.pttl(keys[0]);
		expect(ttl).toBeGreaterThan(0);
		expect(ttl).toBeLessThanOrEqual(30_000);
		first.end();
		await first.result;
	});

	test('an event loop blocked for 6 s loses nothing: the lease is renewed after it', async () => {
		const first = longRun(processes[0], node());
		await first.running;
		const [key] = await runKeys();
		// The whole process stops, timers and sockets included, as under a long synchronous task.
		Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 6000);
		// Without a renewal after the stall, less than 30 - 6 = 24 s would be left.
		await until('the renewal after the stall', async () => (await client.pttl(key)) > 25_000);
		expect(first.lost().aborted).toBe(false);
		const other = await anotherProcess();
		await expect(other.runAlone(nodeRun(node()).context, sync, jest.fn())).resolves.toBeNull();
		first.end();
		await first.result;
		expect(first.logged).toEqual([]);
	});

	test('a run whose lease was taken over hears of it, and letting go leaves the other holder alone', async () => {
		const logged: string[] = [];
		const logger = {
			debug: () => undefined,
			info: () => undefined,
			warn: (message: string) => logged.push(message),
			error: () => undefined,
		};
		// A short lease: renewed every 200 ms.
		const lock = new RedisRunLock(
			storeFor({ host: '127.0.0.1', port: redis.port, db: 0, password: PASSWORD }),
			1200,
		);
		const lease = (await lock.take({ node: node(), holdMs: Infinity, logger })) as RunLease;
		expect(lease).toHaveProperty('lost');
		expect(await lock.take({ node: node(), holdMs: Infinity, logger })).toBe('busy');
		const [key] = await runKeys();
		// As if the lease had run out and another process had taken the node.
		await client.set(key, 'another-holder', 'PX', 30_000);
		await until('the run to hear it lost its lease', async () => lease.lost.aborted);
		expect(logged).toEqual([
			expect.stringMatching(
				/^This run of the node no longer holds it across n8n processes \(its lease in Redis ran out or was taken over\)/,
			),
		]);
		await lease.release();
		expect(await client.get(key)).toBe('another-holder');
	});

	test('a crashed process holds the node no longer than its lease', async () => {
		// A short lease, so that the test need not wait the 30 s.
		const holder = spawn(
			process.execPath,
			[
				'--import',
				'tsx',
				join(__dirname, '../helpers/runLockHolder.ts'),
				'2000',
				// The node as runAlone names it: workflow id and node id.
				`workflow-7\n${node()}`,
			],
			{
				cwd: join(__dirname, '../..'),
				env: { ...process.env },
				stdio: ['ignore', 'pipe', 'inherit'],
			},
		);
		try {
			const [said] = (await once(holder.stdout, 'data')) as [Buffer];
			expect(said.toString()).toBe('held\n');
		} finally {
			const exited = holder.exitCode === null ? once(holder, 'exit') : undefined;
			holder.kill('SIGKILL');
			await exited;
		}

		const other = await anotherProcess();
		await expect(other.runAlone(nodeRun(node()).context, sync, jest.fn())).resolves.toBeNull();
		const [key] = await runKeys();
		expect(await client.pttl(key)).toBeLessThanOrEqual(2000);
		await until('the lease of the killed process to run out', async () =>
			(await runKeys()).every((left) => left !== key),
		);
		expect(await other.runAlone(nodeRun(node()).context, sync, async () => 'after the crash')).toBe(
			'after the crash',
		);
	});
});

/** Moves Date `ms` on, and only Date: Redis's timeouts and the leases' renewals keep real time. */
function advanceClock(ms: number): void {
	fakeDateOnly(Date.now() + ms);
}

describe('Redis unreachable', () => {
	afterEach(() => {
		jest.useRealTimers();
	});

	test('each process keeps its own runs apart, the log says so once, and Redis is used again once it is back', async () => {
		const port = await freePort();
		queueMode(port);
		const first = longRun(processes[0], `down-${nodeNumber}`);
		await first.running;
		expect(first.logged).toEqual([
			expect.stringMatching(
				/^warn Redis cannot be asked whether another n8n process runs the same node \(.*\)\. Until it answers, each n8n process keeps only its own runs of a node apart$/,
			),
		]);
		// This process still refuses a second run; another one cannot see the first.
		await expect(
			runAlone(nodeRun(`down-${nodeNumber}`).context, sync, jest.fn()),
		).resolves.toBeNull();
		const other = await anotherProcess();
		expect(
			await other.runAlone(nodeRun(`down-${nodeNumber}`).context, sync, async () => 'unseen'),
		).toBe('unseen');
		first.end();
		await first.result;

		const again = nodeRun(`down-${nodeNumber}`);
		expect(await runAlone(again.context, sync, async () => 'again')).toBe('again');
		expect(again.logged).toEqual([]);

		const redis = await startRedis({ port, password: PASSWORD });
		// Redis is left alone for 5 s after it failed.
		advanceClock(5000);
		try {
			const back = longRun(processes[0], `down-${nodeNumber}`);
			await back.running;
			expect(back.logged).toEqual([
				'info Redis answers again: runs of a node are kept apart across all n8n processes again',
			]);
			await expect(
				other.runAlone(nodeRun(`down-${nodeNumber}`).context, sync, jest.fn()),
			).resolves.toBeNull();
			back.end();
			await back.result;
		} finally {
			await Promise.all(processes.map(async (process) => await process.closeStores()));
			await redis.stop();
		}
	});

	test('after Redis failed, the runs of the next 5 s do not ask it: each process keeps its own apart meanwhile', async () => {
		let answer: Reply = { error: 'ERR not now' };
		const asked: string[] = [];
		const scripted = await startScriptedRedis((command) => {
			asked.push(command[0]);
			return answer;
		});
		queueMode(scripted.port);
		try {
			advanceClock(0);
			const failed = nodeRun('left-alone');
			expect(await runAlone(failed.context, sync, async () => 'alone')).toBe('alone');
			expect(asked).toHaveLength(1);
			expect(failed.logged).toEqual([
				expect.stringMatching(/^warn Redis cannot be asked .*\(ERR not now\)/),
			]);

			advanceClock(4999);
			const meanwhile = nodeRun('left-alone');
			expect(await runAlone(meanwhile.context, sync, async () => 'still alone')).toBe(
				'still alone',
			);
			expect(asked).toHaveLength(1);
			expect(meanwhile.logged).toEqual([]);

			answer = 1;
			advanceClock(1);
			const back = nodeRun('left-alone');
			expect(await runAlone(back.context, sync, async () => 'held')).toBe('held');
			// The node taken, then let go.
			expect(asked).toHaveLength(3);
			expect(back.logged).toEqual([
				'info Redis answers again: runs of a node are kept apart across all n8n processes again',
			]);
		} finally {
			await closeStores();
			await scripted.close();
		}
	});

	test('after a lease could not be renewed, the runs of the next 5 s do not ask Redis either, though it is back', async () => {
		const logged: string[] = [];
		const logger = {
			debug: () => undefined,
			info: (message: string) => logged.push(`info ${message}`),
			warn: (message: string) => logged.push(`warn ${message}`),
			error: () => undefined,
		};
		const redis = await startRedis({ password: PASSWORD });
		const connection = { host: '127.0.0.1', port: redis.port, db: 0, password: PASSWORD };
		// A short lease: renewed every 200 ms. Date stands still until it is moved.
		const lock = new RedisRunLock(storeFor(connection), 1200);
		advanceClock(0);
		let back: RedisServer | undefined;
		try {
			const held = (await lock.take({ node: 'renewed', holdMs: Infinity, logger })) as RunLease;
			expect(held).toHaveProperty('lost');
			await redis.stop();
			await until('a renewal to fail', async () => logged.length > 0, 5000);
			expect(logged).toEqual([
				expect.stringMatching(/^warn Redis cannot be asked whether another n8n process runs/),
			]);

			// Redis back, empty: the next renewal reconnects and hears the lease is gone.
			back = await startRedis({ port: redis.port, password: PASSWORD });
			await until('a renewal to reach Redis again', async () => held.lost.aborted);
			const client = new Redis({ host: '127.0.0.1', port: back.port, password: PASSWORD });
			try {
				// Left alone for 5 s after the renewal failed: nothing taken in Redis meanwhile.
				expect(await lock.take({ node: 'meanwhile', holdMs: Infinity, logger })).toBeUndefined();
				expect(await client.keys('*:run:*')).toEqual([]);

				advanceClock(5000);
				const lease = (await lock.take({
					node: 'meanwhile',
					holdMs: Infinity,
					logger,
				})) as RunLease;
				expect(lease).toHaveProperty('lost');
				expect(await client.keys('*:run:*')).toHaveLength(1);
				await lease.release();
			} finally {
				client.disconnect();
			}
			expect(logged.slice(1)).toEqual([
				expect.stringMatching(
					/^warn This run of the node no longer holds it .*ran out or was taken over/,
				),
				'info Redis answers again: runs of a node are kept apart across all n8n processes again',
			]);
		} finally {
			await closeStores();
			await back?.stop();
		}
	});

	test('a cancelled run stops waiting for Redis at once, and does not run', async () => {
		const mute = await startMuteRedis();
		queueMode(mute.port);
		const cancel = new AbortController();
		const run = jest.fn();
		const refused = runAlone(nodeRun('cancelled', cancel.signal).context, sync, run);
		await sleep(100);
		cancel.abort();
		await expect(refused).rejects.toThrow('The execution was cancelled');
		expect(run).not.toHaveBeenCalled();
		await closeStores();
		await mute.close();
	});
});
