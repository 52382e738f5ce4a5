/**
 * Overlapping runs of one node in queue mode (a main instance and two workers, each running one
 * execution at a time, sharing the queue's Redis): a run of Only Changed Products on the other
 * worker, while the first still waits for its session, is refused and sends nothing.
 */
import Redis from 'ioredis';
import { request } from 'undici';

import { listenLocal, type LocalServer } from '../helpers/server';
import {
	changedProductsSyncWorkflow,
	runError,
	startQueueCluster,
	until,
	type N8nHarness,
	type N8nServer,
	type QueueCluster,
} from './harness';

const PATH = 'overlapping-sync';
const WORKERS = 2;

let cluster: QueueCluster;
let shop: LocalServer;
let n8n: N8nHarness;
let main: N8nServer;
let workers: N8nServer[] = [];
let workflowId: string;

const products = Array.from({ length: 5 }, (_, index) => ({ sku: `O-${index}`, price: 5 }));

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
	const client = new Redis({ host: '127.0.0.1', port: cluster.redisPort, lazyConnect: true });
	await client.connect();
	try {
		return await client.keys('*:run:*');
	} finally {
		client.disconnect();
	}
}

beforeAll(async () => {
	shop = await listenLocal((_, response) => {
		response.setHeader('content-type', 'application/json');
		response.end(JSON.stringify(products));
	});
	cluster = await startQueueCluster({
		workers: WORKERS,
		concurrency: 1,
		// The service takes 8 s to process a document: the first run waits that long for its session.
		emulator: { processingMs: 8000 },
		publish: async (prepared) => {
			workflowId = await prepared.importWorkflow(
				changedProductsSyncWorkflow({
					name: 'Overlapping catalogue syncs in queue mode',
					path: PATH,
					shopUrl: shop.url,
					credential: prepared.credential,
					responseMode: 'onReceived',
				}),
			);
			await prepared.server.activateWorkflow(workflowId);
		},
	});
	({ n8n, main, workers } = cluster);
});

afterAll(async () => {
	await cluster?.stop();
	await shop?.close();
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
