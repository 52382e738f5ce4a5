/**
 * One account's bucket shared by several processes through Redis: the aggregate pace of 1, 2 and
 * 4 processes against the bucket's limit. See bench/README.md. Prints one JSON line per scenario.
 *
 * The parent runs the emulator and a redis-server; each process is a child running the real
 * transport through n8n-core's request helpers, as an n8n worker does.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

import { startEmulator } from '../scripts/emulator';
import { emulatorCredentials } from '../scripts/n8n/in-process';
import { startRedis } from '../scripts/redis';
import { sendFromCallers } from './callers';

const CAPACITY = 50;
const INTERVAL_MS = 20;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 600);
const CALLERS_PER_PROCESS = 4;

type Sharing = 'redis' | 'process';

interface ProcessTask {
	/** The measured account (the emulator's URL) and one to warm up on, which is another account. */
	url: string;
	warmUpUrl: string;
	redisPort: number;
	sharing: Sharing;
	requests: number;
}

interface ProcessResult {
	failed: number;
	attempts: number;
}

function credentialsFor(url: string, task: ProcessTask) {
	return emulatorCredentials(
		{ url },
		{
			customRateLimit: true,
			bucketCapacity: CAPACITY,
			leakIntervalSeconds: INTERVAL_MS / 1000,
			rateLimitSharing: task.sharing,
			redisHost: '127.0.0.1',
			redisPort: task.redisPort,
		},
	);
}

async function send(url: string, task: ProcessTask, requests: number): Promise<ProcessResult> {
	const credentials = credentialsFor(url, task);
	const failed = await sendFromCallers(credentials, requests, CALLERS_PER_PROCESS);
	return { failed, attempts: requests };
}

/** Child: warm up, say "ready", send its share at "go", print its result. */
async function runProcess(): Promise<void> {
	const task = JSON.parse(process.env.BENCH_TASK ?? '') as ProcessTask;
	// First requests of a process are slow (code not yet compiled, first connections): paid here.
	await send(task.warmUpUrl, task, 20);
	process.stdout.write('ready\n');
	const lines = createInterface({ input: process.stdin });
	for await (const line of lines) {
		if (line === 'go') break;
	}
	const result = await send(task.url, task, task.requests);
	process.stdout.write(`${JSON.stringify(result)}\n`);
	lines.close();
	// The limiter's Redis connection and timers are the process's; the result is out.
	process.exit(0);
}

interface Child {
	process: ChildProcess;
	ready: Promise<void>;
	result: Promise<ProcessResult>;
}

function startChild(task: ProcessTask): Child {
	const child = spawn(process.execPath, [...process.execArgv, __filename, '--process'], {
		env: { ...process.env, BENCH_TASK: JSON.stringify(task) },
		stdio: ['pipe', 'pipe', 'inherit'],
	});
	const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
	let markReady: () => void = () => undefined;
	const ready = new Promise<void>((resolve) => {
		markReady = resolve;
	});
	const result = new Promise<ProcessResult>((resolve, reject) => {
		lines.on('line', (line) => {
			if (line === 'ready') markReady();
			else if (line.startsWith('{')) resolve(JSON.parse(line) as ProcessResult);
		});
		child.on('exit', (code) =>
			reject(new Error(`bench process exited with ${code} before its result`)),
		);
	});
	return { process: child, ready, result };
}

async function scenario(sharing: Sharing, processes: number, redisPort: number): Promise<void> {
	// Fresh emulators: a new base URL is a new account, with its own key in Redis.
	const emulator = await startEmulator({ bucketCapacity: CAPACITY, leakIntervalMs: INTERVAL_MS });
	const warmUp = await startEmulator({ bucketCapacity: CAPACITY, leakIntervalMs: INTERVAL_MS });
	const children: Child[] = [];
	try {
		for (let index = 0; index < processes; index++) {
			const share = Math.floor(REQUESTS / processes) + (index < REQUESTS % processes ? 1 : 0);
			children.push(
				startChild({
					url: emulator.url,
					warmUpUrl: warmUp.url,
					redisPort,
					sharing,
					requests: share,
				}),
			);
		}
		await Promise.all(children.map((child) => child.ready));
		const started = performance.now();
		for (const child of children) child.process.stdin?.write('go\n');
		const results = await Promise.all(children.map((child) => child.result));
		const wallMs = performance.now() - started;
		// The fastest the service allows: its whole bucket at once, then one per interval.
		const limitMs = (REQUESTS - CAPACITY) * INTERVAL_MS;
		console.log(
			JSON.stringify({
				sharing,
				processes,
				n: REQUESTS,
				wall_ms: Math.round(wallMs),
				limit_ms: limitMs,
				ratio: Number((wallMs / limitMs).toFixed(3)),
				rejected429: emulator.stats().rejected429,
				failed: results.reduce((sum, result) => sum + result.failed, 0),
			}),
		);
	} finally {
		for (const child of children) child.process.kill();
		await emulator.close();
		await warmUp.close();
	}
}

async function main(): Promise<void> {
	const redis = await startRedis();
	try {
		for (const processes of [1, 2, 4]) await scenario('redis', processes, redis.port);
		// Without the shared store: what each process can do alone when others use the account.
		for (const processes of [2, 4]) await scenario('process', processes, redis.port);
	} finally {
		await redis.stop();
	}
}

(process.argv.includes('--process') ? runProcess() : main()).catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
