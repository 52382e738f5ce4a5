/**
 * Overlapping runs of one node in queue mode (a main instance and two workers, each running one
 * execution at a time, sharing the queue's Redis): a run of Only Changed Products on the other
 * worker, while the first still waits for its session, is refused and sends nothing.
 */
import Redis from 'ioredis';
import { request } from 'undici';

import { startRedis, type RedisServer } from '../../scripts/redis';
import { listenLocal, type LocalServer } from '../helpers/server';
import {
	CREDENTIAL_TYPE,
	nodeType,
	OWNER,
	prepareN8n,
	runError,
	until,
	type N8nHarness,
	type N8nServer,
	type WorkflowDefinition,
} from './harness';

const PATH = 'overlapping-sync';
const WORKERS = 2;

let redis: RedisServer;
let shop: LocalServer;
let n8n: N8nHarness;
let main: N8nServer;
const workers: N8nServer[] = [];
let workflowId: string;

const products = Array.from({ length: 5 }, (_, index) => ({ sku: `O-${index}`, price: 5 }));

/** Webhook -> the shop's products (HTTP Request) -> Upload with Only Changed Products. */
function syncWorkflow(credential: { id: string; name: string }): WorkflowDefinition {
	return {
		name: 'Overlapping catalogue syncs in queue mode',
		settings: { executionOrder: 'v1' },
		nodes: [
			{
				id: 'overlapping-sync-webhook',
				name: 'Webhook',
				type: 'n8n-nodes-base.webhook',
				typeVersion: 2,
				position: [0, 0],
				webhookId: 'overlapping-sync-webhook',
				parameters: { httpMethod: 'POST', path: PATH, responseMode: 'onReceived', options: {} },
			},
			{
				id: 'overlapping-sync-shop',
				name: 'Shop',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [220, 0],
				parameters: { url: shop.url },
			},
			{
				id: 'overlapping-sync-upload',
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

/** Starts a sync through its webhook (answered at once); the id of the execution it started. */
async function startSync(): Promise<string> {
	const before = new Set((await main.listExecutions({ workflowId })).map(({ id }) => id));
	const response = await request(`${main.url}/webhook/${PATH}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: '{}',
	});
	await response.body.text();
	if (response.statusCode !== 200) throw new Error(`The webhook answered ${response.statusCode}`);
	let started: string | undefined;
	await until(
		'the execution the webhook started',
		async () => {
			started = (await main.listExecutions({ workflowId }))
				.map(({ id }) => id)
				.find((id) => !before.has(id));
			return started !== undefined;
		},
		30_000,
	);
	return started as string;
}

/** The index of the worker that ran the execution. */
async function workerOf(executionId: string): Promise<number> {
	let index = -1;
	await until(
		`a worker to start execution ${executionId}`,
		async () => {
			index = workers.findIndex((process) =>
				process.log().includes(`Worker started execution ${executionId} `),
			);
			return index >= 0;
		},
		30_000,
	);
	return index;
}

/** The run locks held in the queue's Redis now. */
async function runKeys(): Promise<string[]> {
	const client = new Redis({ host: '127.0.0.1', port: redis.port, lazyConnect: true });
	await client.connect();
	try {
		return await client.keys('*:run:*');
	} finally {
		client.disconnect();
	}
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
	// The service takes 8 s to process a document: the first run waits that long for its session.
	n8n = await prepareN8n({ env: queue, emulator: { processingMs: 8000 } });
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

test('a second run of the node on the other worker is refused while the first waits for its session', async () => {
	const first = await startSync();
	const firstWorker = await workerOf(first);
	// The first run holds the node once its Upload has started.
	await until('the first run to hold the node', async () => (await runKeys()).length === 1, 30_000);

	const second = await startSync();
	expect(await workerOf(second)).toBe(1 - firstWorker);
	const refused = await main.waitForExecution(second);
	expect(refused.status).toBe('error');
	expect(runError(refused.data)).toMatchObject({
		node: 'Upload',
		message: 'Another run of this node is still syncing its changed products',
	});

	const synced = await main.waitForExecution(first);
	expect(synced.status).toBe('success');
	// Only the first run sent anything: one document with the five products.
	expect(n8n.emulator.stats().uploads).toBe(1);
	expect(await runKeys()).toEqual([]);
});
