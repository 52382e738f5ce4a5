/**
 * A night's pages of one catalogue over n8n queue mode's workers, or in regular mode: what a night
 * costs, and does a second worker shorten it? A real n8n (the pinned version) in queue mode, a main
 * and BENCH_WORKERS workers (default 1,2: one set-up after the other, each in a fresh n8n folder)
 * on one PostgreSQL database and one Redis (both from Debian, started here; Redis holds the queue,
 * the shared bucket and the memory per product), as n8n's documentation asks of queue mode. The
 * page workflow: a Webhook takes a page number, HTTP Request reads that page of a shop in this
 * process, Upload (Document Upload, Build From Items, Only Changed Products, Products in Each Run:
 * Part of the Catalogue, Output Unchanged Products off) sends its changed products; each page is an
 * execution of its own, started by a call of the webhook, as a night's pages are when a parent
 * workflow calls them, and queue mode hands them to whichever worker is free.
 * BENCH_SEND: how the pages send their changed products: "collected" (default: Collected Into Full
 * Documents of BENCH_PER_DOCUMENT products, default 10000; once every page call has answered, the
 * night calls a second webhook workflow that runs Send Collected Products, its time part of the
 * night's), "withEachRun" (each page uploads its own) or "workflow" (each page uploads its own,
 * Memory Kept In: The Workflow: the page reads its products' known versions from a Data Table
 * once, and writes back the versions Upload hands back, as BENCH_TABLE_WRITE says: "rewrite", the
 * default, or "byRow"; see pages-workflows.ts).
 * BENCH_MODE=regular: n8n's regular mode instead, the main alone on its SQLite, no Redis started
 * or used, each process's bucket its own; only with BENCH_SEND=workflow. The pages are called
 * BENCH_CONCURRENCY (default 1) at a time, as a night's Execute Workflow calls them: a bounded
 * number, for every page in flight is held in the main. One: two at a time did not shorten the
 * night on two cores (the main, its task runner, SQLite, the emulator and the shop share them) and
 * held the main up longer, each page's serializing and saving beside the other's (history.md).
 * Four nights per set-up: `first` (every product new), `quiet` (nothing changed), `one-percent`
 * (every hundredth product's price changed), `every-changed` (every product's price changed). In
 * queue mode all pages are called at once; a night ends when every call (and Send Collected
 * Products) has answered.
 * One JSON line per set-up and night:
 *   {"mode","workers","night","send","tableWrite","concurrency","pages","products","perDocument",
 *    "changedProducts","seconds","sendCollectedSeconds","productsSent","requests","uploads",
 *    "targetRequests","executionsPerWorker","longestBlockMs","blocksOver250Ms","peakMb",
 *    "tableRows"}
 * productsSent: the products of the documents the pages sent and those Send Collected Products sent
 * (with each run: what each page says it sent); requests: what the emulator counted; uploads: its
 * PUT /api/xml; targetRequests: ⌈changed / perDocument⌉ + 10; executionsPerWorker: the executions
 * each worker started (Send Collected Products' among them); tableRows: the rows of the known
 * versions' table after the night (the catalogue's size once every product is confirmed).
 * longestBlockMs and blocksOver250Ms, per process (main, worker 1, ...): its event loop probed
 * through its /healthz every 20 ms over the night (n8n-blocks.ts; a worker's health server is on
 * a port of its own); target: no block over 250 ms. peakMb, per process: the highest VmRSS sampled
 * every 50 ms over the night (n8n-memory.ts; the kernel's VmHWM counts from the process's start, so
 * it cannot tell one night from the last); target: every process under 2,048 MB.
 * A night that fails names the errors of the failed page executions and the end of each process's
 * log (a webhook answers only that its workflow failed).
 * Per night a last line gives the ratio of the night's seconds with the most workers over one
 * worker (target 0.75 with two).
 * BENCH_PAGES (default 40) and BENCH_PAGE_SIZE (default 1000) set the catalogue; product ids are
 * zero-padded to seven digits. The emulator's bucket leaks a request every 1 ms (the credential
 * states the same terms), documents are processed at once: the night's time is n8n's and the
 * node's work, not the service's pace.
 * Linux only (/proc). Needs Node 24 (scripts/toolchain.sh) and the package packed: E2E_PACKAGE_TGZ
 * names the tarball, else the script builds and packs it itself.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';

import { DEFAULT_ACCOUNT, startEmulator, type Emulator } from '../scripts/emulator';
import { emulatorCredential } from '../scripts/n8n/credential';
import { installN8n, N8nFolder, packPackage, postgresDatabase } from '../scripts/n8n/instance';
import { sleep, tail } from '../scripts/n8n/processes';
import { runError } from '../scripts/n8n/run-data';
import type { DataTable, N8nServer, Owner } from '../scripts/n8n/server';
import { dataTablesFilled } from '../scripts/n8n/workflows';
import { startPostgres, type PostgresServer } from '../scripts/postgres';
import { startRedis, type RedisServer } from '../scripts/redis';
import { blocksOverTarget, longestBlock, pidOf, startProbe } from './n8n-blocks';
import { startSampler } from './n8n-memory';
import {
	PAGE_PATH,
	PAGE_WORKFLOW_ID,
	pageWorkflow,
	SEND_COLLECTED_PATH,
	SEND_COLLECTED_WORKFLOW_ID,
	sendCollectedWorkflow,
	type Send,
	type TableWrite,
} from './pages-workflows';

const PAGES = Number(process.env.BENCH_PAGES ?? 40);
const PAGE_SIZE = Number(process.env.BENCH_PAGE_SIZE ?? 1000);
const PRODUCTS = PAGES * PAGE_SIZE;
const REGULAR = process.env.BENCH_MODE === 'regular';
// Regular mode is one main and no worker.
const WORKER_COUNTS = REGULAR ? [0] : (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);
const SEND: Send =
	(['withEachRun', 'workflow'] as const).find((send) => send === process.env.BENCH_SEND) ??
	'collected';
const TABLE_WRITE: TableWrite = process.env.BENCH_TABLE_WRITE === 'byRow' ? 'byRow' : 'rewrite';
// Pages called at once in regular mode; in queue mode every page at once (the workers take turns).
const CONCURRENCY = REGULAR ? Number(process.env.BENCH_CONCURRENCY ?? 1) : Number.POSITIVE_INFINITY;
const PER_DOCUMENT = Number(process.env.BENCH_PER_DOCUMENT ?? 10_000);
const NIGHTS = ['first', 'quiet', 'one-percent', 'every-changed'] as const;
const OWNER: Owner = {
	email: 'bench@example.com',
	firstName: 'Bench',
	lastName: 'Pages',
	password: 'Bench-password-1',
};

type Night = (typeof NIGHTS)[number];

let night: Night = 'first';

function pageOf(page: number): Array<Record<string, unknown>> {
	return Array.from({ length: PAGE_SIZE }, (_, offset) => {
		const index = page * PAGE_SIZE + offset;
		const changed =
			night === 'every-changed' ? 2 : night === 'one-percent' && index % 100 === 0 ? 1 : 0;
		// Zero-padded: the ids of a page sort as strings, so a page is a range of the known versions.
		return {
			sku: `SKU-${String(index).padStart(7, '0')}`,
			name: `Product ${index}`,
			price: 10 + (index % 90) + changed,
		};
	});
}

function changedProducts(current: Night): number {
	if (current === 'quiet') return 0;
	return current === 'one-percent' ? Math.ceil(PRODUCTS / 100) : PRODUCTS;
}

async function startShop(): Promise<{ server: Server; url: string }> {
	const server = createServer((incoming, response) => {
		const page = Number(new URL(incoming.url ?? '/', 'http://shop').searchParams.get('page'));
		response.setHeader('content-type', 'application/json');
		response.end(JSON.stringify(pageOf(page)));
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function requestCounts(emulator: Emulator): { requests: number; uploads: number } {
	const requests = emulator.stats().requests;
	return {
		requests: Object.values(requests).reduce((sum, count) => sum + count, 0),
		uploads: requests['PUT /api/xml'] ?? 0,
	};
}

async function callWebhook(
	mainUrl: string,
	path: string,
	body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
	const response = await request(`${mainUrl}/webhook/${path}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
		headersTimeout: 0,
		bodyTimeout: 0,
	});
	const text = await response.body.text();
	if (response.statusCode !== 200)
		throw new Error(
			`${path} ${JSON.stringify(body)}: the webhook answered ${response.statusCode}: ${text.slice(0, 300)}`,
		);
	return JSON.parse(text) as Record<string, unknown>;
}

/** Products in the documents a run lists as sent. */
function documentProducts(documents: unknown): number {
	return ((documents ?? []) as Array<{ products?: number }>).reduce(
		(sum, document) => sum + Number(document.products ?? 0),
		0,
	);
}

/** The products one page's run sent: its documents when collecting, else its own upload's. */
async function callPage(mainUrl: string, page: number): Promise<number> {
	const answer = await callWebhook(mainUrl, PAGE_PATH, { page });
	const run = (answer.run ?? {}) as { sent?: number; documentsSent?: unknown };
	return SEND === 'collected' ? documentProducts(run.documentsSent) : (run.sent ?? 0);
}

/**
 * Every page called, CONCURRENCY at a time, then (collecting) Send Collected Products; the products
 * sent.
 */
async function callNight(mainUrl: string) {
	const begun = performance.now();
	const pagesSent: number[] = [];
	let next = 0;
	const caller = async () => {
		for (let page = next++; page < PAGES; page = next++)
			pagesSent[page] = await callPage(mainUrl, page);
	};
	await Promise.all(Array.from({ length: Math.min(CONCURRENCY, PAGES) }, caller));
	let productsSent = pagesSent.reduce((sum, count) => sum + count, 0);
	let sendCollectedSeconds: number | undefined;
	if (SEND === 'collected') {
		const restBegun = performance.now();
		const rest = await callWebhook(mainUrl, SEND_COLLECTED_PATH, {});
		sendCollectedSeconds = (performance.now() - restBegun) / 1000;
		productsSent += Number(rest.productsSent);
	}
	return { seconds: (performance.now() - begun) / 1000, sendCollectedSeconds, productsSent };
}

/** What stopped the latest failed executions: a webhook answers only "Error in workflow". */
async function failures(main: N8nServer): Promise<string> {
	const failed = (await main.listExecutions({ workflowId: PAGE_WORKFLOW_ID }))
		.filter(({ status }) => status === 'error')
		.slice(0, 3);
	const errors = await Promise.all(
		failed.map(async ({ id }) => runError((await main.getExecution(id)).data)),
	);
	return errors
		.map((error) => `${error?.node ?? ''}: ${error?.message ?? ''} ${error?.description ?? ''}`)
		.join('\n');
}

/** Probes and samples every n8n process until the returned function is called. */
function watch(processes: N8nServer[]) {
	const stopProbes = processes.map((server) => startProbe(server));
	const stopSampler = startSampler(processes.map(pidOf));
	return async () => {
		const probed = await Promise.all(stopProbes.map(async (stop) => await stop()));
		const sampled = await stopSampler();
		return processes.map((server, index) => ({
			longestBlockMs: longestBlock(probed[index].late),
			blocksOver250Ms: blocksOverTarget(probed[index].late),
			peakMb: Math.round(
				(sampled.processes.find((entry) => entry.pid === pidOf(server))?.rssPeakKb ?? 0) / 1024,
			),
		}));
	};
}

/** One night of the set-up: one JSON line; its seconds. `table`: the known versions' Data Table. */
async function runNight(
	main: N8nServer,
	workers: N8nServer[],
	emulator: Emulator,
	current: Night,
	table: DataTable | undefined,
) {
	night = current;
	const before = requestCounts(emulator);
	const executionsBefore = workers.map(executionsOf);
	// n8n settles after its start and the last night's saving before the night is probed.
	await sleep(2000);
	const stopWatching = watch([main, ...workers]);
	let called: Awaited<ReturnType<typeof callNight>>;
	try {
		called = await callNight(main.url);
	} catch (error) {
		// The probes' and the sampler's threads would keep this process alive after a night that failed.
		await stopWatching().catch(() => undefined);
		const logs = [main, ...workers].map((server) => tail(server.log(), 15)).join('\n---\n');
		throw new Error(
			`The ${current} night failed (${String(error)}); the executions' errors:\n${await failures(main)}\nThe end of each process's log:\n${logs}`,
		);
	}
	await sleep(500);
	const watched = await stopWatching();
	const after = requestCounts(emulator);
	const names = ['main', ...workers.map((_, index) => `worker ${index + 1}`)];
	const byProcess = (figure: keyof (typeof watched)[number]) =>
		Object.fromEntries(names.map((name, index) => [name, watched[index][figure]]));
	console.log(
		JSON.stringify({
			mode: REGULAR ? 'regular' : 'queue',
			workers: workers.length,
			night: current,
			send: SEND,
			...(SEND === 'workflow' && { tableWrite: TABLE_WRITE }),
			...(Number.isFinite(CONCURRENCY) && { concurrency: CONCURRENCY }),
			pages: PAGES,
			products: PRODUCTS,
			perDocument: PER_DOCUMENT,
			changedProducts: changedProducts(current),
			seconds: round(called.seconds),
			...(called.sendCollectedSeconds === undefined
				? {}
				: { sendCollectedSeconds: round(called.sendCollectedSeconds) }),
			productsSent: called.productsSent,
			requests: after.requests - before.requests,
			uploads: after.uploads - before.uploads,
			targetRequests: Math.ceil(changedProducts(current) / PER_DOCUMENT) + 10,
			executionsPerWorker: workers.map(
				(worker, index) => executionsOf(worker) - executionsBefore[index],
			),
			longestBlockMs: byProcess('longestBlockMs'),
			blocksOver250Ms: byProcess('blocksOver250Ms'),
			peakMb: byProcess('peakMb'),
			...(table && { tableRows: await main.dataTableRowCount(table) }),
		}),
	);
	return called.seconds;
}

/**
 * One set-up's four nights. Queue mode: a main and `workers` workers on a Redis and a PostgreSQL
 * of their own (the queue, the shared bucket, the database and, unless the workflow keeps it, the
 * memory per product start empty). Regular mode: the main alone on its SQLite file, no Redis, each
 * process's bucket its own.
 */
async function measure(
	sqliteFolder: N8nFolder,
	workers: number,
	shopUrl: string,
	emulator: Emulator,
): Promise<Record<Night, number>> {
	const processes: N8nServer[] = [];
	let redis: RedisServer | undefined;
	let postgres: PostgresServer | undefined;
	try {
		redis = REGULAR ? undefined : await startRedis();
		postgres = REGULAR ? undefined : await startPostgres();
		const folder = postgres ? sqliteFolder.withDatabase(postgresDatabase(postgres)) : sqliteFolder;
		const credential = emulatorCredential(emulator.url, DEFAULT_ACCOUNT, {
			customRateLimit: true,
			bucketCapacity: 50,
			leakIntervalSeconds: 0.001,
			...(REGULAR && { rateLimitSharing: 'process' }),
		});
		const page = pageWorkflow({
			shopUrl,
			credential,
			send: SEND,
			perDocument: PER_DOCUMENT,
			tableWrite: TABLE_WRITE,
		});
		await folder.importCredentials([credential]);
		await folder.importWorkflows([page, sendCollectedWorkflow(credential, PER_DOCUMENT)]);
		// A main in queue mode does not serve a webhook published while it runs: published first.
		const publisher = await folder.start();
		processes.push(publisher);
		// Logged in: a night that fails reads its executions' errors.
		await publisher.ensureOwner(OWNER);
		// The known versions' table as a user creates it, with the columns the page's inserts name.
		const [tableFilled] = dataTablesFilled(page);
		const table =
			tableFilled && (await publisher.createDataTable(tableFilled.name, tableFilled.columns));
		await publisher.activateWorkflow(PAGE_WORKFLOW_ID);
		await publisher.activateWorkflow(SEND_COLLECTED_WORKFLOW_ID);
		let main = publisher;
		const started: N8nServer[] = [];
		if (redis) {
			await publisher.stop();
			processes.pop();
			const queue = {
				EXECUTIONS_MODE: 'queue',
				QUEUE_BULL_REDIS_HOST: '127.0.0.1',
				QUEUE_BULL_REDIS_PORT: String(redis.port),
			};
			main = await folder.start({ env: queue });
			processes.push(main);
			await main.ensureOwner(OWNER);
			// Each worker's health server (its /healthz, probed) on a free port of its own.
			for (let index = 0; index < workers; index++) {
				const worker = await folder.start({
					command: 'worker',
					args: ['--concurrency=1'],
					env: queue,
				});
				processes.push(worker);
				started.push(worker);
			}
		}
		const seconds = {} as Record<Night, number>;
		for (const current of NIGHTS)
			seconds[current] = await runNight(main, started, emulator, current, table);
		return seconds;
	} finally {
		await Promise.all(processes.map(async (process) => await process.stop()));
		await redis?.stop();
		await postgres?.stop();
	}
}

function executionsOf(worker: N8nServer): number {
	return worker.log().match(/Worker started execution/g)?.length ?? 0;
}

const round = (seconds: number) => Math.round(seconds * 10) / 10;

async function main(): Promise<void> {
	if (REGULAR && SEND !== 'workflow')
		throw new Error(
			'BENCH_MODE=regular runs without Redis: only BENCH_SEND=workflow keeps a memory there',
		);
	if (Number(process.versions.node.split('.')[0]) < 24)
		throw new Error(
			`n8n 2.x needs Node 24, this is Node ${process.versions.node}: run it with the toolchain of scripts/toolchain.sh`,
		);
	const folder = realpathSync(mkdtempSync(join(tmpdir(), 'pages-n8n-')));
	const shop = await startShop();
	const emulator = await startEmulator({ processingMs: 0, leakIntervalMs: 1 });
	try {
		const tarball = process.env.E2E_PACKAGE_TGZ ?? packPackage(join(folder, 'pack'));
		const prepared = await N8nFolder.create(await installN8n(), join(folder, 'prepared'), tarball);
		const results = new Map<number, Record<Night, number>>();
		for (const workers of WORKER_COUNTS)
			results.set(
				workers,
				await measure(prepared.copyTo(join(folder, `n8n-${workers}`)), workers, shop.url, emulator),
			);
		const fewest = results.get(Math.min(...WORKER_COUNTS));
		const most = results.get(Math.max(...WORKER_COUNTS));
		if (fewest && most && WORKER_COUNTS.length > 1)
			for (const current of NIGHTS)
				console.log(
					JSON.stringify({
						night: current,
						ratio: Math.round((most[current] / fewest[current]) * 100) / 100,
						workers: `${Math.max(...WORKER_COUNTS)} over ${Math.min(...WORKER_COUNTS)}`,
					}),
				);
	} finally {
		await emulator.close();
		await new Promise((resolve) => shop.server.close(resolve));
		rmSync(folder, { recursive: true, force: true });
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
