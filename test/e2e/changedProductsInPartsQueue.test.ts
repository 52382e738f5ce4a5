/**
 * Only Changed Products with part of the catalogue per run, in queue mode (a main and two workers,
 * one SQLite database and the queue's Redis): the pages of one catalogue run side by side on both
 * workers through one node, each product remembered on its own in the queue's Redis, so a page run
 * on either worker sends only what changed on its page.
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

const PATH = 'catalogue-page-sync';
const PAGE_SIZE = 20;

let cluster: QueueCluster;
let shop: LocalServer;
let n8n: N8nHarness;
let workers: N8nServer[] = [];
let workflowId: string;
let products = catalogue();

function catalogue(): Array<Record<string, unknown>> {
	return Array.from({ length: 2 * PAGE_SIZE }, (_, index) => ({
		sku: `Q-${index}`,
		name: `Product ${index}`,
		price: 5,
	}));
}

/** Runs the sync of one page through its webhook. */
async function syncPage(page: number): Promise<Array<Record<string, unknown>>> {
	return (await cluster.callWebhook(PATH, workflowId, { page })).output;
}

beforeAll(async () => {
	shop = await listenLocal((request, response) => {
		const page = Number(new URL(request.url ?? '/', 'http://shop').searchParams.get('page'));
		response.setHeader('content-type', 'application/json');
		response.end(JSON.stringify(products.slice(page * PAGE_SIZE, (page + 1) * PAGE_SIZE)));
	});
	cluster = await startQueueCluster({
		workers: 2,
		concurrency: 1,
		// Long enough that the two pages' runs overlap.
		emulator: { processingMs: 1500 },
		publish: async (prepared) => {
			workflowId = await prepared.importWorkflow(
				changedProductsSyncWorkflow({
					name: 'Page sync in queue mode',
					path: PATH,
					shopUrl: `={{ '${shop.url}/?page=' + $json.body.page }}`,
					credential: prepared.credential,
					responseMode: 'lastNode',
					upload: { productsInEachRun: 'partOfCatalogue' },
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

test('pages run side by side on both workers, and each sends only what changed on it', async () => {
	const [first, second] = await Promise.all([syncPage(0), syncPage(1)]);
	expect(first).toHaveLength(PAGE_SIZE);
	expect(second).toHaveLength(PAGE_SIZE);
	expect(first[0].run).toMatchObject({ sent: PAGE_SIZE, sessionsConfirmed: 1 });
	expect(second[0].run).toMatchObject({ sent: PAGE_SIZE, sessionsConfirmed: 1 });
	expect(await takeUploadedSkus(n8n.emulator)).toHaveLength(2 * PAGE_SIZE);
	const started = workers.map((worker) => worker.log().match(/Worker started execution/g)?.length);
	expect(started).toEqual([1, 1]);

	products = catalogue();
	products[PAGE_SIZE + 3].price = 6;
	const [quiet, changed] = await Promise.all([syncPage(0), syncPage(1)]);
	expect(quiet[0].run).toMatchObject({ products: PAGE_SIZE, sent: 0, unchanged: PAGE_SIZE });
	expect(changed[0].run).toMatchObject({ sent: 1, unchanged: PAGE_SIZE - 1 });
	expect(await takeUploadedSkus(n8n.emulator)).toEqual([`Q-${PAGE_SIZE + 3}`]);
});
