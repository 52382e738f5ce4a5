/**
 * A catalogue synced page by page: Document Upload, Build From Items, Only Changed Products with
 * Products in Each Run "Part of the Catalogue", one node run per page of the shop, the memory per
 * product in a real Redis (from Debian, started here). The node runs in n8n-core's engine (the
 * in-process harness) against the emulator (a 20 ms leak interval, documents processed at once).
 * Four nights: first (every product new), quiet (nothing changed), one-percent (1 % changed, spread
 * over every page), every-changed. One JSON line a night:
 *   {"night","send","products","pages","perDocument","changedProducts","productsSent","requests",
 *    "uploads","targetRequests","ms","msPerPage","longestBlockMs","redisBytesPerProduct","rssPeakMb"}
 * send: BENCH_SEND, how the pages send their changed products: "collected" (default: Collected
 * Into Full Documents of BENCH_PER_DOCUMENT products, default 10000, and Send Collected Products
 * after the last page), "withEachRun" (each page uploads its own) or "workflow" (Memory Kept In: The
 * Workflow, no Redis: each page uploads its own, and the bench keeps the versions the node hands
 * back, as a workflow's data table would, handing each product's in with its page; perDocument is
 * then the page);
 * requests: what the emulator counted; targetRequests: ⌈changed / perDocument⌉ + 10;
 * longestBlockMs: the longest the event loop was held (gaps of a 10 ms timer, less the 10 ms, at
 * most the processor time used in them); redisBytesPerProduct: Redis's used memory over the
 * catalogue's products after the night (0 with the memory kept by the workflow); rssPeakMb: this process's peak (the emulator's stored
 * documents included).
 * BENCH_PRODUCTS (default 100000) and BENCH_PAGE_SIZE (default 10000) set the sizes.
 */
import { randomUUID } from 'node:crypto';

import Redis from 'ioredis';
import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { EDITION } from '../nodes/edition/edition';
// The explicit .js keeps tsx from resolving the node's codex file (ProductDataIntegration.node.json).
import { ProductDataIntegration } from '../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { closeStores } from '../nodes/shared/fullEdition/sharedRegistry';
import { useEdition } from '../nodes/shared/ports';
import { startEmulator } from '../scripts/emulator';
import { emulatorCredentials, runNode } from '../scripts/n8n/in-process';
import { startRedis } from '../scripts/redis';

const PRODUCTS = Number(process.env.BENCH_PRODUCTS ?? 100_000);
const PAGE_SIZE = Number(process.env.BENCH_PAGE_SIZE ?? 10_000);
const SEND =
	(['withEachRun', 'workflow'] as const).find((send) => send === process.env.BENCH_SEND) ??
	'collected';
const PER_DOCUMENT =
	SEND === 'workflow' ? PAGE_SIZE : Number(process.env.BENCH_PER_DOCUMENT ?? 10_000);
const NIGHTS = ['first', 'quiet', 'one-percent', 'every-changed'] as const;
const PROBE_INTERVAL_MS = 10;

/** Product `index` on `night`: the one-percent night changes every hundredth, the last night all. */
function product(index: number, night: (typeof NIGHTS)[number]): IDataObject {
	const changed =
		night === 'every-changed' ? 2 : night === 'one-percent' && index % 100 === 0 ? 1 : 0;
	return { sku: `SKU-${index}`, name: `Product ${index}`, price: 10 + (index % 90) + changed };
}

/** A page of products, each with the version `kept` of it where the workflow keeps the memory. */
function page(
	start: number,
	night: (typeof NIGHTS)[number],
	kept: Map<string, string>,
): INodeExecutionData[] {
	const end = Math.min(PRODUCTS, start + PAGE_SIZE);
	return Array.from({ length: end - start }, (_, offset) => {
		const json = product(start + offset, night);
		if (SEND === 'workflow') json.knownVersion = kept.get(String(json.sku)) ?? '';
		return { json };
	});
}

/** What a workflow keeps of a page run: the version of each product the service confirmed. */
function keepVersions(output: INodeExecutionData[], kept: Map<string, string>): void {
	for (const { json } of output)
		if (typeof json.version === 'string') kept.set(String(json.product), json.version);
}

function eventLoopProbe(): { stop(): number } {
	let longest = 0;
	let last = performance.now();
	let lastCpu = process.cpuUsage();
	const tick = () => {
		const now = performance.now();
		const cpu = process.cpuUsage(lastCpu);
		longest = Math.max(
			longest,
			Math.min(now - last - PROBE_INTERVAL_MS, (cpu.user + cpu.system) / 1000),
		);
		last = now;
		lastCpu = process.cpuUsage();
	};
	const timer = setInterval(tick, PROBE_INTERVAL_MS);
	return {
		stop: () => {
			clearInterval(timer);
			return Math.round(longest);
		},
	};
}

async function main(): Promise<void> {
	useEdition(EDITION);
	const redis = await startRedis();
	const raw = new Redis({ host: '127.0.0.1', port: redis.port });
	const emulator = await startEmulator({ bucketCapacity: 50, leakIntervalMs: 20 });
	const credentials = emulatorCredentials(emulator, {
		customRateLimit: true,
		bucketCapacity: 50,
		leakIntervalSeconds: 0.02,
		// With the memory kept by the workflow nothing of the run touches Redis.
		...(SEND === 'workflow'
			? { rateLimitSharing: 'process' }
			: { rateLimitSharing: 'redis', redisHost: '127.0.0.1', redisPort: redis.port }),
	});
	const parameters = {
		resource: 'document',
		operation: 'upload',
		source: 'items',
		rootElement: 'Products',
		itemElement: 'Product',
		onlyChangedProducts: true,
		productField: 'sku',
		productsInEachRun: 'partOfCatalogue',
		...(SEND === 'workflow'
			? { memoryKeptIn: 'workflow', knownVersionField: 'knownVersion' }
			: { sendChangedProducts: SEND }),
		memoryName: 'bench-catalogue',
		productsPerDocument: PER_DOCUMENT,
		outputUnchangedProducts: false,
	} as INodeParameters;
	const sendTheRest = {
		resource: 'document',
		operation: 'sendCollected',
		memoryName: 'bench-catalogue',
		productsPerDocument: PER_DOCUMENT,
	} as INodeParameters;
	const node = new ProductDataIntegration();
	const nodeId = randomUUID();
	const redisBefore = await usedMemory(raw);
	const kept = new Map<string, string>();
	let rssPeak = 0;
	try {
		for (const night of NIGHTS) {
			emulator.reset();
			const probe = eventLoopProbe();
			const started = performance.now();
			let productsSent = 0;
			let pages = 0;
			for (let start = 0; start < PRODUCTS; start += PAGE_SIZE) {
				const result = await runNode({
					node,
					nodeId,
					parameters,
					items: page(start, night, kept),
					credentials,
				});
				if (result.error) throw result.error;
				keepVersions(result.output[0], kept);
				const run = result.output[0][0].json.run as IDataObject;
				productsSent +=
					SEND === 'collected' ? documentProducts(run.documentsSent) : Number(run.sent);
				pages++;
				rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
			}
			if (SEND === 'collected') {
				const rest = await runNode({ node, parameters: sendTheRest, credentials });
				if (rest.error) throw rest.error;
				productsSent += documentProducts(rest.output[0][0].json.documents);
			}
			const ms = Math.round(performance.now() - started);
			const requests = emulator.stats().requests;
			const changedProducts =
				night === 'first' || night === 'every-changed'
					? PRODUCTS
					: night === 'one-percent'
						? Math.ceil(PRODUCTS / 100)
						: 0;
			console.log(
				JSON.stringify({
					night,
					send: SEND,
					products: PRODUCTS,
					pages,
					perDocument: PER_DOCUMENT,
					changedProducts,
					productsSent,
					requests: Object.values(requests).reduce((sum, count) => sum + count, 0),
					uploads: requests['PUT /api/xml'] ?? 0,
					targetRequests: Math.ceil(changedProducts / PER_DOCUMENT) + 10,
					ms,
					msPerPage: Math.round(ms / pages),
					longestBlockMs: probe.stop(),
					redisBytesPerProduct: Math.round(((await usedMemory(raw)) - redisBefore) / PRODUCTS),
					rssPeakMb: Math.round(rssPeak / 2 ** 20),
				}),
			);
		}
	} finally {
		raw.disconnect();
		await closeStores();
		await emulator.close();
		await redis.stop();
	}
}

/** Products in the documents a run lists as sent. */
function documentProducts(documents: unknown): number {
	return (documents as IDataObject[]).reduce((sum, document) => sum + Number(document.products), 0);
}

async function usedMemory(raw: Redis): Promise<number> {
	const info = await raw.info('memory');
	return Number(/used_memory:(\d+)/.exec(info)?.[1]);
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
