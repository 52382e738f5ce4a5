/**
 * Only Changed Products in queue mode (a main instance and two workers sharing one PostgreSQL
 * database and the queue's Redis): the memory is n8n's deduplication store in the database, so a run on the
 * other worker, after the first worker went away, sends only what changed.
 */

import { listenLocal, type LocalServer } from '../helpers/server';
import { takeUploadedSkus } from '../helpers/uploads';
import {
	changedProductsSyncWorkflow,
	startQueueCluster,
	type N8nHarness,
	type N8nServer,
	type QueueCluster,
} from './harness';

const PATH = 'catalogue-sync';
const WORKERS = 2;

let cluster: QueueCluster;
let shop: LocalServer;
let n8n: N8nHarness;
let workers: N8nServer[] = [];
let workflowId: string;
let products = catalogue();

function catalogue(): Array<Record<string, unknown>> {
	return Array.from({ length: 40 }, (_, index) => ({
		sku: `Q-${index}`,
		name: `Product ${index}`,
		price: 5,
	}));
}

/** Runs the sync through its webhook; its output and the index of the worker that ran it. */
async function sync(): Promise<{ output: Array<Record<string, unknown>>; worker: number }> {
	return await cluster.callWebhook(PATH, workflowId);
}

beforeAll(async () => {
	shop = await listenLocal((_, response) => {
		response.setHeader('content-type', 'application/json');
		response.end(JSON.stringify(products));
	});
	cluster = await startQueueCluster({
		workers: WORKERS,
		concurrency: 1,
		publish: async (prepared) => {
			workflowId = await prepared.importWorkflow(
				changedProductsSyncWorkflow({
					name: 'Catalogue sync in queue mode',
					path: PATH,
					shopUrl: shop.url,
					credential: prepared.credential,
					responseMode: 'lastNode',
				}),
			);
			await prepared.server.activateWorkflow(workflowId);
		},
	});
	({ n8n, workers } = cluster);
});

afterAll(async () => {
	await cluster?.stop();
	await shop?.close();
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
