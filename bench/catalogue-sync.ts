/**
 * A nightly catalogue sync of 100,000 products over five nights, two ways side by side:
 * - `incremental`: Document Upload, Build From Items, Only Changed Products on;
 * - `today`: the same node without it, the whole catalogue every night.
 *
 * The node runs in n8n-core's engine (the in-process harness) against the emulator (fast time: a
 * 20 ms leak interval, documents processed at once). Its memory is n8n's own deduplication store:
 * n8n's DeduplicationHelper and its ProcessedData table from the installed n8n (scripts/install-n8n.sh),
 * on an SQLite file, as a regular n8n keeps it; no Redis anywhere. The nights:
 *   1 first          every product is new
 *   2 changed        1 % of the products changed; the incremental way's session finishes with errors
 *                    (the emulator fails documents that contain the night's mark)
 *   3 after-failure  night 2's products go again, with night 3's own 1 %
 *   4 after-restart  a new process: the memory read back from the SQLite file
 *   5 verified       another new process running the verified edition (verified/dist), like night 2
 * Nights 1-3 run in one child process, 4 and 5 each in their own. One JSON line per night and way:
 *   {"part":"products","way","night","scenario","products","changedProducts","productsSent",
 *    "requests","bucketSeconds","ms","storeMs","sessionsFailed","memoryEntries","memoryBytes"}
 * requests: what the emulator counted; bucketSeconds: how long the service's own terms (50 at once,
 * then one per 5 s) take for them from an empty bucket; storeMs: time spent in the store's calls;
 * memoryEntries/memoryBytes: the node's row in the store after the night.
 * BENCH_PRODUCTS sets the catalogue's size (default 100000; 0 leaves these nights out).
 *
 * Then the worst night, at 100,000 and at the bound of 250,000 products (BENCH_EVERY_CHANGED sets
 * the sizes, e.g. 100000,250000; 0 leaves it out), each size in its own child process and database,
 * the incremental way only: a first night, a night where every product changed, and a night where
 * 1 % changed. Beside the store time, the longest the event loop was blocked in the night: the
 * longest gap between ticks of a 10 ms timer, less the 10 ms, counted only as far as the process
 * used the processor in it (while it is blocked, n8n answers no request, runs no other execution,
 * and a queue-mode worker renews no lock). One JSON line a night:
 *   {"part":"every-changed","night","scenario","products","changedProducts","productsSent",
 *    "requests","ms","storeMs","longestBlockMs","longestBlockInStoreMs","longestNodeBlockMs",
 *    "memoryEntries","memoryBytes","memoryPeakEntries"}
 * memoryPeakEntries: the longest the node's list got during the night;
 * longestBlockInStoreMs: the longest block that began and ended within one call of the store;
 * longestNodeBlockMs: the longest block within the node's run in which no call of the store was
 * under way at any moment: the node's own work (n8n-core's before and after the node is left out).
 *
 * BENCH_VALIDATE_ONLY=1 adds a fourth worst night: every product changed again, run with Validate
 * Only, which sends nothing and puts the list back as it found it (memoryEntries as after night 3)
 * by n8n's removal of what the check added: how long that takes, and its longest block.
 *
 * BENCH_COUNT_MISSING=1 runs the incremental way with Count Missing Products on: each line then also
 * carries "countMissing":true and the run's "missing" (null on the first night, with no identities
 * kept yet).
 */
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import type {
	IDataDeduplicator,
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	ICredentialType,
} from 'n8n-workflow';

// The explicit .js keeps tsx from resolving the node's codex file (ProductDataIntegration.node.json).
import { ProductDataIntegration } from '../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { DEFAULT_ACCOUNT, startEmulator } from '../scripts/emulator';
import { installN8n, PROJECT_ROOT } from '../scripts/n8n/instance';
import {
	deduplicator,
	emulatorCredentials,
	registerCredentialType,
	runNode,
} from '../scripts/n8n/in-process';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? 100_000);
const CHANGED = Math.max(1, Math.round(PRODUCTS / 100));
const SERVICE_CAPACITY = 50;
const SERVICE_INTERVAL_SECONDS = 5;
const SCENARIOS = ['first', 'changed', 'after-failure', 'after-restart', 'verified'];
const FAILING_NIGHT = 2;
const EVERY_CHANGED_SIZES = (process.env.BENCH_EVERY_CHANGED ?? '100000,250000')
	.split(',')
	.map(Number)
	.filter((size) => size > 0);
const EVERY_CHANGED_SCENARIOS = [
	'first',
	'every-changed',
	'one-percent-changed',
	'validate-only-every-changed',
];
const VALIDATE_ONLY = process.env.BENCH_VALIDATE_ONLY === '1';
const PROBE_INTERVAL_MS = 10;
const COUNT_MISSING = process.env.BENCH_COUNT_MISSING === '1';

interface ChildTask {
	/** Set for the worst night: the catalogue's size. */
	everyChanged?: number;
	nights: number[];
	emulatorUrl: string;
	database: string;
	n8nModules: string;
	edition: 'full' | 'verified';
}

/** Product `index` as it is on `night`: each night from the second changes its own 1 %. */
function product(index: number, night: number): IDataObject {
	const changedOn = Math.floor(index / CHANGED) + 2;
	const version = changedOn <= night ? changedOn : 1;
	return {
		sku: `SKU-${index}`,
		name: version === 1 ? `Product ${index}` : `Product ${index} (night ${version})`,
		price: 10 + (index % 90) + (version === 1 ? 0 : 1),
		stock: index % 7,
	};
}

function catalogue(night: number): INodeExecutionData[] {
	return Array.from({ length: PRODUCTS }, (_, index) => ({ json: product(index, night) }));
}

/**
 * Product `index` of a catalogue of the worst night: night 2 changes every product's price, night 3
 * then 1 % of the products' names.
 */
function everyChangedProduct(index: number, night: number, size: number): IDataObject {
	const renamed = night >= 3 && index < Math.max(1, Math.round(size / 100));
	return {
		sku: `SKU-${index}`,
		name: renamed ? `Product ${index} (renamed)` : `Product ${index}`,
		price: 10 + (index % 90) + (night >= 2 ? 1 : 0) + (night >= 4 ? 1 : 0),
		stock: index % 7,
	};
}

/**
 * The longest the event loop was held up between two ticks of a timer, until stop(). A gap counts
 * only as far as this process used the processor in it: on a loaded machine the operating system
 * also holds a process up, and that is no block of its own. `storeCall()` names the store call in
 * flight, if any: a gap that began and ended within one call is the store's (n8n's helper and its
 * database), the node awaiting it; it counts as `inStore`. `storeCalls()` counts the calls begun
 * and ended: a gap within the node's run (`nodeRunning()` at both ends) with no call in flight at
 * either end and none begun or ended in it is the node's own; it counts as `inNode`.
 */
function eventLoopProbe(
	storeCall: () => number | undefined,
	storeCalls: () => number,
	nodeRunning: () => boolean,
) {
	let longest = 0;
	let longestInStore = 0;
	let longestInNode = 0;
	let last = performance.now();
	let lastCpu = process.cpuUsage();
	let lastCall = storeCall();
	let lastCalls = storeCalls();
	let lastRunning = nodeRunning();
	const tick = () => {
		const now = performance.now();
		const cpu = process.cpuUsage(lastCpu);
		const cpuMs = (cpu.user + cpu.system) / 1000;
		const gap = Math.min(now - last - PROBE_INTERVAL_MS, cpuMs);
		const call = storeCall();
		const calls = storeCalls();
		const running = nodeRunning();
		longest = Math.max(longest, gap);
		if (call !== undefined && call === lastCall) longestInStore = Math.max(longestInStore, gap);
		if (
			running &&
			lastRunning &&
			call === undefined &&
			lastCall === undefined &&
			calls === lastCalls
		)
			longestInNode = Math.max(longestInNode, gap);
		last = now;
		lastCpu = process.cpuUsage();
		lastCall = call;
		lastCalls = calls;
		lastRunning = running;
	};
	const timer = setInterval(tick, PROBE_INTERVAL_MS);
	return {
		stop: () => {
			clearInterval(timer);
			tick();
			return {
				longestBlockMs: Math.round(longest),
				longestBlockInStoreMs: Math.round(longestInStore),
				longestNodeBlockMs: Math.round(longestInNode),
			};
		},
	};
}

function parameters(incremental: boolean): IDataObject {
	return {
		resource: 'document',
		operation: 'upload',
		source: 'items',
		rootElement: 'Products',
		itemElement: 'Product',
		onlyChangedProducts: incremental,
		productField: 'sku',
		countMissingProducts: incremental && COUNT_MISSING,
		options: { waitForCompletion: true },
	};
}

/** With Count Missing Products, what the run's summary counted. */
function missingOf(output: INodeExecutionData[][]): IDataObject {
	if (!COUNT_MISSING) return {};
	return { countMissing: true, missing: (output[0][0].json.run as IDataObject).missing };
}

async function control(url: string, route: string, body?: unknown): Promise<unknown> {
	const response = await fetch(
		`${url}/__emulator/${route}`,
		body === undefined
			? {}
			: {
					method: 'POST',
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify(body),
				},
	);
	if (!response.ok) throw new Error(`emulator ${route}: ${response.status}`);
	return await response.json();
}

async function requestCount(url: string): Promise<number> {
	const { requests } = (await control(url, 'stats')) as { requests: Record<string, number> };
	return Object.values(requests).reduce((sum, count) => sum + count, 0);
}

/** Products in the documents uploaded since `known` (ids), read back from the emulator. */
async function productsUploaded(url: string, known: Set<string>): Promise<number> {
	const uploads = (await control(url, 'uploads')) as Array<{ id: string }>;
	let products = 0;
	for (const { id } of uploads.filter((upload) => !known.has(upload.id))) {
		known.add(id);
		const response = await fetch(`${url}/api/files/${id}`, {
			headers: {
				authorization: `Basic ${Buffer.from(`${DEFAULT_ACCOUNT.username}:${DEFAULT_ACCOUNT.password}`).toString('base64')}`,
				customerId: '1001',
				customerIdType: 'ServiceID',
			},
		});
		products += (await response.text()).split('<Product>').length - 1;
	}
	return products;
}

/** n8n's own deduplication store on an SQLite file, from the installed n8n. */
async function n8nStore(n8nModules: string, database: string) {
	const load = createRequire(join(n8nModules, 'n8n', 'package.json'));
	load('reflect-metadata');
	const { Container } = load('@n8n/di') as {
		Container: { set(type: unknown, value: unknown): void };
	};
	const db = load('@n8n/db') as {
		ProcessedData: new () => unknown;
		ProcessedDataRepository: new (source: unknown) => unknown;
	};
	const { DataSource } = load('@n8n/typeorm') as {
		DataSource: new (options: object) => {
			initialize(): Promise<void>;
			query(sql: string): Promise<Array<Record<string, number>>>;
			getMetadata(entity: unknown): { tableName: string };
		};
	};
	const { DeduplicationHelper } = load('n8n/dist/deduplication/deduplication-helper') as {
		DeduplicationHelper: new () => IDataDeduplicator;
	};
	const source = new DataSource({
		type: 'sqlite',
		database,
		entities: [db.ProcessedData],
		synchronize: true,
	});
	await source.initialize();
	Container.set(db.ProcessedDataRepository, new db.ProcessedDataRepository(source));
	const helper = new DeduplicationHelper();
	let storeMs = 0;
	let calls = 0;
	let callsEnded = 0;
	let callInFlight: number | undefined;
	const timed =
		<A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
		async (...args: A): Promise<R> => {
			const start = performance.now();
			callInFlight = ++calls;
			try {
				return await call(...args);
			} finally {
				callInFlight = undefined;
				callsEnded++;
				storeMs += performance.now() - start;
			}
		};
	const table = source.getMetadata(db.ProcessedData).tableName;
	/** The list's length as the calls leave it, counted from their answers, and its peak. */
	let entries = 0;
	let peakEntries = 0;
	const row = async (nodeId: string) => {
		const [found] = await source.query(
			`SELECT length(value) AS bytes, json_array_length(json_extract(value, '$.data')) AS entries FROM ${table} WHERE context = 'n:${nodeId}'`,
		);
		return { memoryEntries: found?.entries ?? 0, memoryBytes: found?.bytes ?? 0 };
	};
	const check = timed(helper.checkProcessedAndRecord.bind(helper));
	const clear = timed(helper.clearAllProcessedItems.bind(helper));
	const remove = timed(helper.removeProcessed.bind(helper));
	return {
		store: {
			checkProcessedAndRecord: async (...args) => {
				const answer = await check(...args);
				entries += answer.new.length;
				peakEntries = Math.max(peakEntries, entries);
				return answer;
			},
			// The node removes only what its checks added, so each value handed is in the list.
			removeProcessed: async (values, ...rest) => {
				await remove(values, ...rest);
				entries -= values.length;
			},
			clearAllProcessedItems: async (...args) => {
				await clear(...args);
				entries = 0;
			},
			getProcessedDataCount: timed(helper.getProcessedDataCount.bind(helper)),
		} satisfies IDataDeduplicator,
		storeCall: () => callInFlight,
		/** Calls begun and ended so far. */
		storeCalls: () => calls + callsEnded,
		takeStoreMs: () => {
			const taken = Math.round(storeMs);
			storeMs = 0;
			return taken;
		},
		/** The row of `nodeId`: its entries and the bytes of its stored value. */
		row,
		/**
		 * From now on, counts the longest the list of `nodeId` gets (one node per store) until
		 * takePeakEntries.
		 */
		countEntriesOf: async (nodeId: string) => {
			entries = (await row(nodeId)).memoryEntries;
			peakEntries = entries;
		},
		takePeakEntries: () => peakEntries,
	};
}

/** Whether `node` is running: true while its execute is under way. */
function watchRuns(node: INodeType): () => boolean {
	const execute = node.execute;
	if (!execute) throw new Error('The node has no execute');
	let running = false;
	node.execute = async function (this: IExecuteFunctions, ...args) {
		running = true;
		try {
			return await execute.apply(this, args);
		} finally {
			running = false;
		}
	};
	return () => running;
}

function nodeOf(edition: ChildTask['edition']): INodeType {
	if (edition === 'full') return new ProductDataIntegration();
	const dist = join(PROJECT_ROOT, 'verified', 'dist');
	const load = createRequire(join(dist, 'package.json'));
	const { ProductDataIntegrationApi } = load(
		'./credentials/ProductDataIntegrationApi.credentials.js',
	) as { ProductDataIntegrationApi: new () => ICredentialType };
	registerCredentialType(new ProductDataIntegrationApi());
	const { ProductDataIntegration: VerifiedNode } = load(
		'./nodes/ProductDataIntegration/ProductDataIntegration.node.js',
	) as {
		ProductDataIntegration: new () => INodeType;
	};
	return new VerifiedNode();
}

async function runNights(task: ChildTask): Promise<void> {
	const { store, takeStoreMs, row } = await n8nStore(task.n8nModules, task.database);
	deduplicator.use(store);
	const node = nodeOf(task.edition);
	const known = new Set(
		((await control(task.emulatorUrl, 'uploads')) as Array<{ id: string }>).map(({ id }) => id),
	);
	for (const night of task.nights) {
		for (const way of ['incremental', 'today'] as const) {
			const failing = night === FAILING_NIGHT && way === 'incremental';
			if (failing) await control(task.emulatorUrl, 'failing', { texts: [`(night ${night})`] });
			const before = await requestCount(task.emulatorUrl);
			const nodeId = `catalogue-${way}`;
			const start = performance.now();
			const { error, output } = await runNode({
				node,
				nodeId,
				parameters: parameters(way === 'incremental'),
				items: catalogue(night),
				credentials: emulatorCredentials(
					{ url: task.emulatorUrl },
					{ customRateLimit: true, bucketCapacity: 50, leakIntervalSeconds: 0.02 },
				),
			});
			const ms = Math.round(performance.now() - start);
			if (failing) await control(task.emulatorUrl, 'failing', { texts: [] });
			if (error) throw new Error(`night ${night}, ${way}: ${error.message}`);
			const requests = (await requestCount(task.emulatorUrl)) - before;
			console.log(
				JSON.stringify({
					part: 'products',
					way,
					night,
					scenario: SCENARIOS[night - 1],
					products: PRODUCTS,
					changedProducts: night === 1 ? PRODUCTS : CHANGED,
					productsSent: await productsUploaded(task.emulatorUrl, known),
					requests,
					bucketSeconds: Math.max(0, requests - SERVICE_CAPACITY) * SERVICE_INTERVAL_SECONDS,
					ms,
					storeMs: takeStoreMs(),
					...(way === 'incremental'
						? {
								sessionsFailed: (output[0][0].json.run as IDataObject).sessionsFailed,
								...missingOf(output),
								...(await row(nodeId)),
							}
						: {}),
				}),
			);
		}
	}
}

async function runEveryChanged(task: ChildTask & { everyChanged: number }): Promise<void> {
	const { store, storeCall, storeCalls, takeStoreMs, row, countEntriesOf, takePeakEntries } =
		await n8nStore(task.n8nModules, task.database);
	deduplicator.use(store);
	const node = nodeOf(task.edition);
	const nodeRunning = watchRuns(node);
	const size = task.everyChanged;
	const known = new Set(
		((await control(task.emulatorUrl, 'uploads')) as Array<{ id: string }>).map(({ id }) => id),
	);
	const nodeId = `every-changed-${size}`;
	for (const night of task.nights) {
		const items = Array.from({ length: size }, (_, index) => ({
			json: everyChangedProduct(index, night, size),
		}));
		const before = await requestCount(task.emulatorUrl);
		await countEntriesOf(nodeId);
		const probe = eventLoopProbe(storeCall, storeCalls, nodeRunning);
		const start = performance.now();
		const { error, output } = await runNode({
			node,
			nodeId,
			parameters: { ...parameters(true), validateOnly: night === 4 },
			items,
			credentials: emulatorCredentials(
				{ url: task.emulatorUrl },
				{ customRateLimit: true, bucketCapacity: 50, leakIntervalSeconds: 0.02 },
			),
		});
		const ms = Math.round(performance.now() - start);
		const blocks = probe.stop();
		if (error) throw new Error(`every changed, ${size}, night ${night}: ${error.message}`);
		console.log(
			JSON.stringify({
				part: 'every-changed',
				night,
				scenario: EVERY_CHANGED_SCENARIOS[night - 1],
				products: size,
				changedProducts: night === 3 ? Math.max(1, Math.round(size / 100)) : size,
				productsSent: await productsUploaded(task.emulatorUrl, known),
				requests: (await requestCount(task.emulatorUrl)) - before,
				ms,
				storeMs: takeStoreMs(),
				...blocks,
				...missingOf(output),
				...(await row(nodeId)),
				memoryPeakEntries: takePeakEntries(),
			}),
		);
	}
}

async function inChild(task: ChildTask): Promise<void> {
	const child = fork(__filename, ['child', JSON.stringify(task)], { stdio: 'inherit' });
	const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
	if (code !== 0) throw new Error(`nights ${task.nights.join(', ')} ended with exit code ${code}`);
}

async function main(): Promise<void> {
	const n8nModules = dirname(dirname(await installN8n()));
	execFileSync(process.execPath, [join(PROJECT_ROOT, 'scripts', 'verified.mjs'), 'build'], {
		stdio: ['ignore', 'ignore', 'inherit'],
	});
	const emulator = await startEmulator({ bucketCapacity: 50, leakIntervalMs: 20 });
	const folder = mkdtempSync(join(tmpdir(), 'catalogue-sync-'));
	const base = { emulatorUrl: emulator.url, database: join(folder, 'database.sqlite'), n8nModules };
	try {
		if (PRODUCTS > 0) {
			await inChild({ ...base, nights: [1, 2, 3], edition: 'full' });
			await inChild({ ...base, nights: [4], edition: 'full' });
			await inChild({ ...base, nights: [5], edition: 'verified' });
		}
		for (const size of EVERY_CHANGED_SIZES) {
			await inChild({
				...base,
				database: join(folder, `every-changed-${size}.sqlite`),
				nights: VALIDATE_ONLY ? [1, 2, 3, 4] : [1, 2, 3],
				edition: 'full',
				everyChanged: size,
			});
		}
	} finally {
		await emulator.close();
		rmSync(folder, { recursive: true, force: true });
	}
}

const [mode, task] = process.argv.slice(2);
function runChild(task: ChildTask): Promise<void> {
	return task.everyChanged === undefined
		? runNights(task)
		: runEveryChanged({ ...task, everyChanged: task.everyChanged });
}

(mode === 'child' ? runChild(JSON.parse(task) as ChildTask) : main()).then(
	() => process.exit(0),
	(error: unknown) => {
		console.error(error);
		process.exit(1);
	},
);
