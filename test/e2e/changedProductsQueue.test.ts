/**
 * Only Changed Products in queue mode (a main instance and two workers sharing one SQLite database
 * and the queue's Redis): the memory is n8n's deduplication store in the database, so a run on the
 * other worker, after the first worker went away, sends only what changed.
 */
import { request } from 'undici';

import { startRedis, type RedisServer } from '../../scripts/redis';
import { takeUploadedSkus } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';
import {
	CREDENTIAL_TYPE,
	nodeType,
	OWNER,
	prepareN8n,
	type N8nHarness,
	type N8nServer,
	type WorkflowDefinition,
} from './harness';

const PATH = 'catalogue-sync';
const WORKERS = 2;

let redis: RedisServer;
let shop: LocalServer;
let n8n: N8nHarness;
let main: N8nServer;
const workers: N8nServer[] = [];
let workflowId: string;
let products = catalogue();

function catalogue(): Array<Record<string, unknown>> {
	return Array.from({ length: 40 }, (_, index) => ({
		sku: `Q-${index}`,
		name: `Product ${index}`,
		price: 5,
	}));
}

/** Webhook -> the shop's products (HTTP Request) -> Upload with Only Changed Products. */
function syncWorkflow(credential: { id: string; name: string }): WorkflowDefinition {
	return {
		name: 'Catalogue sync in queue mode',
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'catalogue-sync-webhook',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: 'catalogue-sync-webhook',
				parameters: {
					httpMethod: 'POST',
					path: PATH,
					responseMode: 'lastNode',
					responseData: 'allEntries',
					options: {},
				},
			},
			{
				id: 'catalogue-sync-shop',
				name: 'Shop',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [220, 0],
				parameters: { url: shop.url },
			},
			{
				id: 'catalogue-sync-upload',
				name: 'Upload',
				type: nodeType('productDataIntegration'),
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

/** Runs the sync through its webhook; its output and the index of the worker that ran it. */
async function sync(): Promise<{ output: Array<Record<string, unknown>>; worker: number }> {
	const response = await request(`${main.url}/webhook/${PATH}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: '{}',
	});
	const text = await response.body.text();
	if (response.statusCode !== 200)
		throw new Error(`The webhook answered ${response.statusCode}: ${text.slice(0, 500)}`);
	const runs = await main.listExecutions({ workflowId });
	const latest = Math.max(...runs.map((execution) => Number(execution.id)));
	const worker = workers.findIndex((process) =>
		process.log().includes(`Worker started execution ${latest} `),
	);
	return { output: JSON.parse(text) as Array<Record<string, unknown>>, worker };
}

beforeAll(async () => {
	redis = await startRedis();
	shop = await listenLocal((_, response) => {
		response.setHeader('content-type', 'application/json');
		response.end(JSON.stringify(products));
	});
	const queue = {
		EXECUTIONS_MODE: 'queue',
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(redis.port),
	};
	n8n = await prepareN8n({ env: queue });
	workflowId = await n8n.importWorkflow(syncWorkflow(n8n.credential));
	await n8n.server.activateWorkflow(workflowId);
	// A main instance in queue mode serves the webhooks of workflows published before it started.
	await n8n.server.stop();
	main = await n8n.folder.start({ env: queue });
	await main.ensureOwner(OWNER);
	for (let index = 0; index < WORKERS; index++) {
		workers.push(
			await n8n.folder.start({ command: 'worker', args: ['--concurrency=1'], env: queue }),
		);
	}
});

afterAll(async () => {
	await Promise.all(
		[...workers, main].filter(Boolean).map(async (process) => await process.stop()),
	);
	await n8n?.stop();
	await shop?.close();
	await redis?.stop();
});

test('a run on the other worker sends only what changed', async () => {
	const first = await sync();
	expect(first.output).toHaveLength(40);
	expect(await takeUploadedSkus(n8n.emulator)).toHaveLength(40);
	expect(first.worker).toBeGreaterThanOrEqual(0);
	// The worker that ran the first sync goes away, with whatever it kept in its own memory.
	await workers[first.worker].stop();

	products = catalogue();
	products[8].price = 6;
	const second = await sync();
	expect(second.worker).toBe(1 - first.worker);
	expect(await takeUploadedSkus(n8n.emulator)).toEqual(['Q-8']);
	expect(second.output[0].run).toMatchObject({
		products: 40,
		sent: 1,
		unchanged: 39,
		sessionsConfirmed: 1,
	});
});
