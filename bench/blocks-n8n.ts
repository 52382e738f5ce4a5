/**
 * The worst nights of Only Changed Products in a real n8n: is n8n still answering while the node
 * puts its memory back? `n8n start` (the pinned version, default settings: regular mode, SQLite),
 * one workflow run from its Manual Trigger: HTTP Request reads the catalogue (one item per product)
 * from a server in this process, then Upload Catalogue (Document Upload, Build From Items, one
 * document, Only Changed Products). Per size (BENCH_SIZES, default 100000,250000), each in a fresh
 * n8n folder, three nights: `first`, `every-changed` (every product's price changed), and
 * `one-percent-changed`. BENCH_OUTPUT_UNCHANGED=0 turns Output Unchanged Products off (only the
 * products sent come out of the node).
 *
 * n8n's event loop is probed through its GET /healthz every 20 ms (n8n-blocks.ts: a late answer's
 * block is the smaller of its delay and the processor time of n8n's main thread over it). Each block
 * is placed by its time in a node's run (from n8n's run data) or outside them.
 *
 * One JSON line per night:
 *   {"products","night","status","seconds","uploadSeconds","productsSent","requests",
 *    "mainHighWaterMb","executionDataMb","longestAnswerMs","longestBlockMs","blocksOver250Ms","longestBlockInUploadMs",
 *    "uploadBlocksOver250Ms","longestBlockByPlace"}
 * longestBlockByPlace: the longest block within each node's run, and "outside the nodes" (n8n's
 * own work between and after them, e.g. saving the execution). mainHighWaterMb: the n8n process's
 * peak memory since it started (the kernel's VmHWM; the nights run one after another in one n8n);
 * executionDataMb: the run data the night left in n8n's database.
 * n8n's REST API hands back the run data of an execution only up to EXECUTIONS_DATA_MAX_DISPLAY_SIZE
 * (100 MB by default; a night of 250,000 products is more): the benchmark raises it to 1 GB, which
 * changes only what the API shows, not how n8n runs.
 * Linux only (/proc). Needs Node 24 (scripts/toolchain.sh) and the package packed: E2E_PACKAGE_TGZ
 * names the tarball, else the script builds and packs it itself.
 */
import { createServer } from 'node:http';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DEFAULT_ACCOUNT, startEmulator, type Emulator } from '../scripts/emulator';
import { emulatorCredential } from '../scripts/n8n/credential';
import { installN8n, N8nFolder, packPackage } from '../scripts/n8n/instance';
import { sleep } from '../scripts/n8n/processes';
import type { N8nServer, Owner } from '../scripts/n8n/server';
import { nodeItems, runError } from '../scripts/n8n/run-data';
import { actionNode, chainWorkflow } from '../scripts/n8n/workflows';
import { blocksOverTarget, longestBlock, startProbe, type LateAnswer } from './n8n-blocks';
import { startSampler } from './n8n-memory';

const SIZES = (process.env.BENCH_SIZES ?? '100000,250000').split(',').map((size) => {
	const value = Number(size);
	if (!Number.isInteger(value) || value <= 0)
		throw new Error(`BENCH_SIZES must list positive integers, got "${size}"`);
	return value;
});
const OUTPUT_UNCHANGED = process.env.BENCH_OUTPUT_UNCHANGED !== '0';
const NIGHT_TIMEOUT_MS = 30 * 60_000;
const UPLOAD_NODE = 'Upload Catalogue';

const OWNER: Owner = {
	email: 'bench@example.com',
	firstName: 'Bench',
	lastName: 'Owner',
	password: 'Local-bench-password-1',
};

const NIGHTS = ['first', 'every-changed', 'one-percent-changed'] as const;
type Night = (typeof NIGHTS)[number];

/** The catalogue of a night: every product's price moves on `every-changed`, 1 % on the next. */
function catalogue(products: number, night: Night): string {
	const price = (index: number) => {
		if (night === 'first') return 100;
		if (night === 'every-changed') return 200;
		return index % 100 === 0 ? 300 : 200;
	};
	const items: string[] = [];
	for (let index = 0; index < products; index++)
		items.push(
			JSON.stringify({ sku: `SKU-${index}`, name: `Product ${index}`, price: price(index) }),
		);
	return `[${items.join(',')}]`;
}

/** Serves the night's catalogue as one JSON array; `setNight` chooses the night. */
async function startCatalogue(products: number) {
	let body = '';
	const server = createServer((_request, response) => {
		response.writeHead(200, { 'content-type': 'application/json' });
		response.end(body);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/products`,
		setNight: (night: Night) => {
			body = catalogue(products, night);
		},
		stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
	};
}

/** Start -> one empty item -> Catalogue (HTTP Request: one item per product) -> Upload Catalogue. */
function workflow(catalogueUrl: string) {
	return {
		...chainWorkflow(
			'Catalogue sync (blocks)',
			[{ json: {} }],
			[
				{
					name: 'Catalogue',
					type: 'n8n-nodes-base.httpRequest',
					typeVersion: 4.2,
					parameters: { url: catalogueUrl },
				},
				actionNode(UPLOAD_NODE, {
					resource: 'document',
					operation: 'upload',
					source: 'items',
					rootElement: 'Products',
					itemElement: 'Product',
					itemsPerDocument: 0,
					onlyChangedProducts: true,
					productField: 'sku',
					outputUnchangedProducts: OUTPUT_UNCHANGED,
				}),
			],
		),
		id: 'blocksBenchCatalogue',
	};
}

function requestCount(emulator: Emulator): number {
	return Object.values(emulator.stats().requests).reduce((sum, count) => sum + count, 0);
}

async function runNight(server: N8nServer, workflowId: string) {
	const executionId = await server.startRun(workflowId);
	const deadline = Date.now() + NIGHT_TIMEOUT_MS;
	for (;;) {
		const execution = (await server.listExecutions({ workflowId })).find(
			(entry) => entry.id === executionId,
		);
		if (execution && !['new', 'running', 'waiting'].includes(execution.status))
			return { executionId, status: execution.status };
		if (Date.now() > deadline) throw new Error(`Execution ${executionId} did not finish`);
		await sleep(500);
	}
}

async function measureSize(n8n: N8nFolder, emulator: Emulator, products: number): Promise<void> {
	const shop = await startCatalogue(products);
	await n8n.importCredentials([emulatorCredential(emulator.url, DEFAULT_ACCOUNT)]);
	const definition = workflow(shop.url);
	await n8n.importWorkflows([definition]);
	// Only what the REST API hands back: the night's run data (over n8n's default 100 MB at 250,000
	// products) is read for the Upload node's start and end.
	const server = await n8n.start({ env: { EXECUTIONS_DATA_MAX_DISPLAY_SIZE: String(1024 ** 3) } });
	try {
		await server.ensureOwner(OWNER);
		for (const night of NIGHTS) {
			shop.setNight(night);
			const requestsBefore = requestCount(emulator);
			// n8n settles after its start and the last night's saving before the night is probed.
			await sleep(2000);
			const stopProbe = startProbe(server);
			const stopSampler = startSampler(/ n8n start /);
			const started = performance.now();
			let ran: Awaited<ReturnType<typeof runNight>>;
			try {
				ran = await runNight(server, definition.id);
			} catch (error) {
				// The workers would keep this process alive after a night that failed.
				await stopProbe().catch(() => undefined);
				await stopSampler();
				throw error;
			}
			const seconds = (performance.now() - started) / 1000;
			await sleep(500);
			const { late, longestAnswerMs } = await stopProbe();
			const sampled = await stopSampler();
			const main = sampled.processes.find((entry) => entry.pid === sampled.mainPid);
			const execution = await server.getExecution(ran.executionId);
			const { runData } = execution.data.resultData;
			const [upload] = runData[UPLOAD_NODE] ?? [];
			// Where each late answer falls: in a node's run, or in n8n's work between and after them.
			const placeOf = (answer: LateAnswer) =>
				Object.keys(runData).find((name) =>
					runData[name].some(
						(run) =>
							answer.startedAt + answer.answerMs > run.startTime &&
							answer.startedAt < run.startTime + (run.executionTime ?? 0),
					),
				) ?? 'outside the nodes';
			const byPlace: Record<string, LateAnswer[]> = {};
			for (const answer of late) (byPlace[placeOf(answer)] ??= []).push(answer);
			const inUpload = byPlace[UPLOAD_NODE] ?? [];
			const summary = upload
				? (nodeItems(execution.data, UPLOAD_NODE)[0]?.run as { sent?: number } | undefined)
				: undefined;
			const error = runError(execution.data);
			process.stdout.write(
				`${JSON.stringify({
					products,
					night,
					status: ran.status,
					...(error ? { error: `${error.node ?? ''}: ${error.message}` } : {}),
					seconds: Math.round(seconds * 10) / 10,
					uploadSeconds: upload ? Math.round((upload.executionTime ?? 0) / 100) / 10 : null,
					productsSent: summary?.sent ?? null,
					requests: requestCount(emulator) - requestsBefore,
					mainHighWaterMb: Math.round((main?.hwmKb ?? 0) / 1024),
					executionDataMb: Math.round((execution.dataBytes / 1024 / 1024) * 10) / 10,
					longestAnswerMs,
					longestBlockMs: longestBlock(late),
					blocksOver250Ms: blocksOverTarget(late),
					longestBlockInUploadMs: longestBlock(inUpload),
					uploadBlocksOver250Ms: blocksOverTarget(inUpload),
					longestBlockByPlace: Object.fromEntries(
						Object.entries(byPlace).map(([place, answers]) => [place, longestBlock(answers)]),
					),
				})}\n`,
			);
		}
	} finally {
		await server.stop();
		await shop.stop();
	}
}

async function main(): Promise<void> {
	if (Number(process.versions.node.split('.')[0]) < 24)
		throw new Error(
			`n8n 2.x needs Node 24, this is Node ${process.versions.node}: run it with the toolchain of scripts/toolchain.sh`,
		);
	const folder = realpathSync(mkdtempSync(join(tmpdir(), 'blocks-n8n-')));
	let emulator: Emulator | undefined;
	try {
		const tarball = process.env.E2E_PACKAGE_TGZ ?? packPackage(join(folder, 'pack'));
		const n8nBin = await installN8n();
		const prepared = await N8nFolder.create(n8nBin, join(folder, 'prepared'), tarball);
		emulator = await startEmulator({ processingMs: 0 });
		for (const products of SIZES)
			await measureSize(prepared.copyTo(join(folder, `n8n-${products}`)), emulator, products);
	} finally {
		await emulator?.close();
		rmSync(folder, { recursive: true, force: true });
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
