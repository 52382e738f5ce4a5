/**
 * The pages of one catalogue over n8n queue mode's workers: does a second worker shorten the night?
 * A real n8n (the pinned version) in queue mode, a main and BENCH_WORKERS workers (default 1,2: one
 * set-up after the other, each in a fresh n8n folder) on one SQLite database and one Redis (from
 * Debian, started here). The page workflow: a Webhook takes a page number, HTTP Request reads that
 * page of a shop in this process, Upload (Document Upload, Build From Items, Only Changed Products,
 * Products in Each Run: Part of the Catalogue, Output Unchanged Products off) sends its changed
 * products; each page is an execution of its own, started by a call of the webhook, as a night's
 * pages are when a parent workflow calls them, and queue mode hands them to whichever worker is
 * free. Two nights per set-up: `first` (every product new) and `one-percent` (every hundredth
 * product changed). All pages are called at once; a night ends when every call has answered.
 * One JSON line per set-up and night:
 *   {"workers","night","pages","products","seconds","productsSent","requests","executionsPerWorker"}
 * and per night a last line with the ratio of the night's seconds with the most workers over one
 * worker (target 0.75 with two).
 * BENCH_PAGES (default 40) and BENCH_PAGE_SIZE (default 1000) set the catalogue. The emulator's
 * bucket leaks a request every 1 ms (the credential states the same terms), documents are processed
 * at once: the night's time is n8n's and the node's work, not the service's pace.
 * Needs Node 24 (scripts/toolchain.sh) and the package packed: E2E_PACKAGE_TGZ names the tarball,
 * else the script builds and packs it itself.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';

import { DEFAULT_ACCOUNT, startEmulator, type Emulator } from '../scripts/emulator';
import { CREDENTIAL_TYPE, emulatorCredential } from '../scripts/n8n/credential';
import { installN8n, N8nFolder, packPackage } from '../scripts/n8n/instance';
import type { N8nServer, Owner } from '../scripts/n8n/server';
import { startRedis } from '../scripts/redis';

const PAGES = Number(process.env.BENCH_PAGES ?? 40);
const PAGE_SIZE = Number(process.env.BENCH_PAGE_SIZE ?? 1000);
const WORKER_COUNTS = (process.env.BENCH_WORKERS ?? '1,2').split(',').map(Number);
const NIGHTS = ['first', 'one-percent'] as const;
const OWNER: Owner = {
	email: 'bench@example.com',
	firstName: 'Bench',
	lastName: 'Pages',
	password: 'Bench-password-1',
};
const WORKFLOW_ID = 'benchPageSync01';
const PATH = 'page-sync';

type Night = (typeof NIGHTS)[number];

let night: Night = 'first';

function pageOf(page: number): Array<Record<string, unknown>> {
	return Array.from({ length: PAGE_SIZE }, (_, offset) => {
		const index = page * PAGE_SIZE + offset;
		const changed = night === 'one-percent' && index % 100 === 0 ? 1 : 0;
		return { sku: `SKU-${index}`, name: `Product ${index}`, price: 10 + (index % 90) + changed };
	});
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

function pageWorkflow(shopUrl: string, credential: { id: string; name: string }) {
	return {
		id: WORKFLOW_ID,
		name: 'Page sync',
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'webhook',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: 'page-sync-webhook',
				parameters: {
					httpMethod: 'POST',
					path: PATH,
					responseMode: 'lastNode',
					responseData: 'firstEntryJson',
					options: {},
				},
			},
			{
				id: 'shop',
				name: 'Shop',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [220, 0],
				parameters: { url: `={{ '${shopUrl}/?page=' + $json.body.page }}` },
			},
			{
				id: 'upload',
				name: 'Upload',
				type: 'n8n-nodes-product-data-integration.productDataIntegration',
				typeVersion: 1,
				position: [440, 0],
				parameters: {
					resource: 'document',
					operation: 'upload',
					source: 'items',
					rootElement: 'Products',
					itemElement: 'Product',
					onlyChangedProducts: true,
					productField: 'sku',
					productsInEachRun: 'partOfCatalogue',
					outputUnchangedProducts: false,
				},
				credentials: { [CREDENTIAL_TYPE]: credential },
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Shop', type: 'main', index: 0 }]] },
			Shop: { main: [[{ node: 'Upload', type: 'main', index: 0 }]] },
		},
	};
}

function requestCount(emulator: Emulator): number {
	return Object.values(emulator.stats().requests).reduce((sum, count) => sum + count, 0);
}

async function callPage(mainUrl: string, page: number): Promise<number> {
	const response = await request(`${mainUrl}/webhook/${PATH}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ page }),
		headersTimeout: 0,
		bodyTimeout: 0,
	});
	const text = await response.body.text();
	if (response.statusCode !== 200)
		throw new Error(
			`Page ${page}: the webhook answered ${response.statusCode}: ${text.slice(0, 300)}`,
		);
	const answer = JSON.parse(text) as { run?: { sent?: number } };
	return answer.run?.sent ?? 0;
}

async function measure(
	folder: N8nFolder,
	workers: number,
	shopUrl: string,
	emulator: Emulator,
): Promise<Record<Night, number>> {
	// A Redis of its own: the queue, the shared bucket and the memory per product start empty.
	const redis = await startRedis();
	const credential = emulatorCredential(emulator.url, DEFAULT_ACCOUNT, {
		customRateLimit: true,
		bucketCapacity: 50,
		leakIntervalSeconds: 0.001,
	});
	await folder.importCredentials([credential]);
	await folder.importWorkflows([pageWorkflow(shopUrl, credential)]);
	// A main in queue mode does not serve a webhook published while it runs: published first.
	const publisher = await folder.start();
	await publisher.ensureOwner(OWNER);
	await publisher.activateWorkflow(WORKFLOW_ID);
	await publisher.stop();
	const queue = {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(redis.port),
	};
	const processes: N8nServer[] = [];
	const seconds = {} as Record<Night, number>;
	try {
		const main = await folder.start({ env: queue });
		processes.push(main);
		const started: N8nServer[] = [];
		for (let index = 0; index < workers; index++) {
			const worker = await folder.start({
				command: 'worker',
				args: ['--concurrency=1'],
				env: queue,
			});
			processes.push(worker);
			started.push(worker);
		}
		for (const current of NIGHTS) {
			night = current;
			const requestsBefore = requestCount(emulator);
			const executionsBefore = started.map(executionsOf);
			const begun = performance.now();
			const sent = await Promise.all(
				Array.from({ length: PAGES }, async (_, page) => await callPage(main.url, page)),
			);
			seconds[current] = (performance.now() - begun) / 1000;
			console.log(
				JSON.stringify({
					workers,
					night: current,
					pages: PAGES,
					products: PAGES * PAGE_SIZE,
					seconds: Math.round(seconds[current] * 10) / 10,
					productsSent: sent.reduce((sum, count) => sum + count, 0),
					requests: requestCount(emulator) - requestsBefore,
					executionsPerWorker: started.map(
						(worker, index) => executionsOf(worker) - executionsBefore[index],
					),
				}),
			);
		}
	} finally {
		await Promise.all(processes.map(async (process) => await process.stop()));
		await redis.stop();
	}
	return seconds;
}

function executionsOf(worker: N8nServer): number {
	return worker.log().match(/Worker started execution/g)?.length ?? 0;
}

async function main(): Promise<void> {
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
