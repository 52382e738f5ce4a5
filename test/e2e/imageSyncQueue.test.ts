/**
 * Queue mode (a main instance and two workers sharing one Redis): the photos a worker uploaded are
 * known to the other worker, through the Redis the account shares its rate limit through, so a
 * re-sync run by the other worker sends no image request; the trigger in the same workflow keeps
 * its state in the workflow's static data, and the image syncs leave it intact.
 */
import { randomBytes } from 'node:crypto';

import { putXml } from '../../scripts/emulator/client';
import { itemsCode } from '../../scripts/n8n/workflows';
import {
	nodeType,
	startQueueCluster,
	until,
	type N8nHarness,
	type N8nServer,
	type QueueCluster,
	type WorkflowDefinition,
	webhookNode,
} from './harness';

const PATH = 'photo-sync';
const TRIGGER = 'When an Upload Arrives';
const TRIGGER_STATE = `node:${TRIGGER}`;
const WORKERS = 2;

let cluster: QueueCluster;
let n8n: N8nHarness;
let main: N8nServer;
let workers: N8nServer[] = [];
let workflowId: string;

const photos = Array.from({ length: 3 }, (_, index) => ({
	json: { sku: `SKU-${index}` },
	binary: {
		front: { data: randomBytes(600), mimeType: 'image/png', fileName: `sku-${index}-front.png` },
		back: { data: randomBytes(800), mimeType: 'image/png', fileName: `sku-${index}-back.png` },
	},
}));

/** Webhook -> the catalogue's photos -> Upload Photos; beside it, the trigger with its state. */
function photoSyncWorkflow(credential: { id: string; name: string }): WorkflowDefinition {
	return {
		name: 'Photo sync beside a trigger',
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(PATH, 'lastNode'),
			{
				id: 'photo-sync-photos',
				name: 'Photos',
				type: 'n8n-nodes-base.code',
				typeVersion: 2,
				position: [220, 0],
				parameters: { jsCode: itemsCode(photos) },
			},
			{
				id: 'photo-sync-upload',
				name: 'Upload Photos',
				type: nodeType('productDataIntegration'),
				typeVersion: 1,
				position: [440, 0],
				parameters: {
					resource: 'image',
					operation: 'upload',
					imagesFrom: 'named',
					binaryProperties: 'front, back',
					options: {},
				},
				credentials: { productDataIntegrationApi: credential },
			},
			{
				id: 'photo-sync-trigger',
				name: TRIGGER,
				type: nodeType('productDataIntegrationTrigger'),
				typeVersion: 1,
				position: [0, 300],
				parameters: {
					pollTimes: { item: [{ mode: 'everyMinute' }] },
					events: ['uploadReceived'],
					options: {},
				},
				credentials: { productDataIntegrationApi: credential },
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Photos', type: 'main', index: 0 }]] },
			Photos: { main: [[{ node: 'Upload Photos', type: 'main', index: 0 }]] },
		},
	};
}

/** Runs the sync through its webhook; its output and the index of the worker that ran it. */
async function sync(): Promise<{ output: Array<Record<string, unknown>>; worker: number }> {
	return await cluster.callWebhook(PATH, workflowId);
}

function requests(route: string): number {
	return n8n.emulator.stats().requests[route] ?? 0;
}

/** The trigger's state as n8n keeps it in static data (nodes/ProductDataIntegrationTrigger/state.ts). */
interface TriggerState {
	scope: string;
	listedAt: number;
	seen: Array<{ day: string; ids: string[] }>;
}

function seenIds(state: TriggerState | undefined): string[] {
	return (state?.seen ?? []).flatMap((entry) => entry.ids);
}

async function triggerState(): Promise<TriggerState | undefined> {
	return (await main.getWorkflowStaticData(workflowId))[TRIGGER_STATE] as TriggerState | undefined;
}

beforeAll(async () => {
	cluster = await startQueueCluster({
		workers: WORKERS,
		concurrency: 1,
		publish: async (prepared) => {
			workflowId = await prepared.importWorkflow(photoSyncWorkflow(prepared.credential));
			await prepared.server.activateWorkflow(workflowId);
		},
	});
	({ n8n, main, workers } = cluster);
});

afterAll(async () => {
	await cluster?.stop();
});

test('a re-sync on the other worker sends no image request, and the trigger state stays intact', async () => {
	// An upload for the trigger to remember, and a poll that saved it.
	const session = (
		await putXml(n8n.emulator, '<Products><Product><Sku>T-1</Sku></Product></Products>')
	).text;
	await until(
		'the trigger to save its state',
		async () => seenIds(await triggerState()).includes(session),
		120_000,
	);
	const before = (await triggerState()) as TriggerState;

	const first = await sync();
	expect(first.output).toHaveLength(6);
	expect(
		first.output.every((photo) => typeof photo.hashcode === 'string' && photo.known === undefined),
	).toBe(true);
	expect(requests('POST /api/images')).toBe(1);
	expect(first.worker).toBeGreaterThanOrEqual(0);
	// The worker that ran the first sync goes away, with whatever it kept in its own memory.
	await workers[first.worker].stop();

	const posts = requests('POST /api/images');
	const lookups = requests('GET /api/images');
	const second = await sync();
	expect(second.worker).toBe(1 - first.worker);
	expect(requests('POST /api/images')).toBe(posts);
	expect(requests('GET /api/images')).toBe(lookups);
	expect(second.output).toEqual(first.output.map((photo) => ({ ...photo, known: true })));

	const after = (await triggerState()) as TriggerState;
	expect(after.scope).toBe(before.scope);
	expect(seenIds(after)).toContain(session);
	expect(after.listedAt).toBeGreaterThanOrEqual(before.listedAt);
});
