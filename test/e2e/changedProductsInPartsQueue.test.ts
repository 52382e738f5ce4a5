/**
 * Only Changed Products with part of the catalogue per run, in queue mode (a main and two workers,
 * one PostgreSQL database and the queue's Redis): the pages of one catalogue run side by side on both
 * workers through one node, each product remembered on its own in the queue's Redis, so a page run
 * on either worker sends only what changed on its page; collected into full documents, the changed
 * products of both pages go in one document per Products per Document, the rest with Send
 * Collected Products.
 */

import { listenLocal, type LocalServer } from '../helpers/server';
import { takeUploadedSkus } from '../helpers/uploads';
import {
	changedProductsSyncWorkflow,
	sendCollectedWorkflow,
	startQueueCluster,
	type N8nHarness,
	type N8nServer,
	type QueueCluster,
} from './harness';

const PATH = 'catalogue-page-sync';
const COLLECTING_PATH = 'catalogue-page-collect';
const SEND_REST_PATH = 'catalogue-send-collected';
const PAGE_SIZE = 20;
const PER_DOCUMENT = 30;

let cluster: QueueCluster;
let shop: LocalServer;
let n8n: N8nHarness;
let workers: N8nServer[] = [];
let workflowId: string;
let collectingId: string;
let sendRestId: string;
let products = catalogue();

function catalogue(): Array<Record<string, unknown>> {
	return Array.from({ length: 2 * PAGE_SIZE }, (_, index) => ({
		sku: `Q-${index}`,
		name: `Product ${index}`,
		price: 5,
	}));
}

function executionsStarted(worker: N8nServer): number {
	return worker.log().match(/Worker started execution/g)?.length ?? 0;
}

/** Runs the sync of one page through its webhook. */
async function syncPage(page: number): Promise<Array<Record<string, unknown>>> {
	return (await cluster.callWebhook(PATH, workflowId, { page })).output;
}

beforeAll(async () => {
	shop = await listenLocal(async (request, response) => {
		// A page takes a while, as a real shop's does: two pages called at once are on both workers.
		await new Promise((resolve) => setTimeout(resolve, 700));
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
			collectingId = await prepared.importWorkflow(
				changedProductsSyncWorkflow({
					name: 'Page sync collecting in queue mode',
					path: COLLECTING_PATH,
					shopUrl: `={{ '${shop.url}/?page=' + $json.body.page }}`,
					credential: prepared.credential,
					responseMode: 'lastNode',
					upload: {
						productsInEachRun: 'partOfCatalogue',
						sendChangedProducts: 'collected',
						memoryName: 'queue-catalogue',
						productsPerDocument: PER_DOCUMENT,
					},
				}),
			);
			sendRestId = await prepared.importWorkflow(
				sendCollectedWorkflow({
					name: 'Send the rest in queue mode',
					path: SEND_REST_PATH,
					memoryName: 'queue-catalogue',
					productsPerDocument: PER_DOCUMENT,
					credential: prepared.credential,
				}),
			);
			for (const id of [workflowId, collectingId, sendRestId])
				await prepared.server.activateWorkflow(id);
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
	expect(workers.map(executionsStarted)).toEqual([1, 1]);

	products = catalogue();
	products[PAGE_SIZE + 3].price = 6;
	const [quiet, changed] = await Promise.all([syncPage(0), syncPage(1)]);
	expect(quiet[0].run).toMatchObject({ products: PAGE_SIZE, sent: 0, unchanged: PAGE_SIZE });
	expect(changed[0].run).toMatchObject({ sent: 1, unchanged: PAGE_SIZE - 1 });
	expect(await takeUploadedSkus(n8n.emulator)).toEqual([`Q-${PAGE_SIZE + 3}`]);
});

test('collected, the changed products of pages on both workers go in full documents, the rest after the last page', async () => {
	products = catalogue();
	const collect = async (page: number) =>
		await cluster.callWebhook(COLLECTING_PATH, collectingId, { page });
	const sendRest = async () => (await cluster.callWebhook(SEND_REST_PATH, sendRestId)).output;
	n8n.emulator.reset();

	const startedBefore = workers.map(executionsStarted);
	const pages = await Promise.all([collect(0), collect(1)]);
	expect(workers.map((worker, index) => executionsStarted(worker) - startedBefore[index])).toEqual([
		1, 1,
	]);
	const documentsSent = pages.flatMap(
		({ output }) =>
			(output[0].run as { documentsSent: Array<Record<string, unknown>> }).documentsSent,
	);
	// Whichever page completed the document sent it; the other only collected.
	expect(documentsSent).toEqual([
		expect.objectContaining({ products: PER_DOCUMENT, status: 'succeeded' }),
	]);
	const [rest] = await sendRest();
	expect(rest).toMatchObject({ productsSent: 2 * PAGE_SIZE - PER_DOCUMENT });
	expect(n8n.emulator.stats().requests['PUT /api/xml']).toBe(2);
	expect(await takeUploadedSkus(n8n.emulator)).toEqual(
		catalogue()
			.map(({ sku }) => String(sku))
			.sort(),
	);

	products = catalogue();
	products[3].price = 6;
	products[PAGE_SIZE + 7].price = 6;
	await Promise.all([collect(0), collect(1)]);
	const [changed] = await sendRest();
	expect(changed).toMatchObject({
		productsSent: 2,
		documents: [expect.objectContaining({ products: 2 })],
	});
	expect(n8n.emulator.stats().requests['PUT /api/xml']).toBe(1);
	expect(await takeUploadedSkus(n8n.emulator)).toEqual([`Q-${PAGE_SIZE + 7}`, 'Q-3'].sort());
});
