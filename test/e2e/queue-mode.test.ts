/**
 * Queue mode: a main instance and two workers sharing one Redis and one PostgreSQL database, four
 * webhook executions of 100 uploads each at once, against an emulated service with a bucket of 50
 * and 20 ms per leak. With the shared rate limit (Rate Limit Sharing: Automatic, found from n8n's
 * own queue settings) the service refuses nothing; with each process on its own, it refuses, and
 * still every item is uploaded exactly once. The workers are started as `n8n worker` without
 * EXECUTIONS_MODE, as n8n allows (the command alone puts a worker in queue mode): Automatic must
 * recognise queue mode from the command too.
 */
import { request } from 'undici';

import {
	CREDENTIAL_TYPE,
	EMULATOR_CREDENTIAL,
	nodeType,
	startQueueCluster,
	type N8nHarness,
	type N8nServer,
	type QueueCluster,
	type WorkflowDefinition,
	webhookNode,
} from './harness';

const CAPACITY = 50;
const INTERVAL_MS = 20;
const EXECUTIONS = 4;
const ITEMS_PER_EXECUTION = 100;
const WORKERS = 2;

const SHARED = 'shared-batch';
const UNSHARED = 'unshared-batch';

let cluster: QueueCluster;
let n8n: N8nHarness;
/** The main instance the webhooks go to (see beforeAll), and the workers. */
let main: N8nServer;
let workers: N8nServer[] = [];
const workflowIds: Record<string, string> = {};

/** Webhook (POST, answers with the items of the last node) -> one item per product -> Upload. */
function batchUploadWorkflow(
	path: string,
	credential: { id: string; name: string },
): WorkflowDefinition {
	return {
		name: `Batch upload (${path})`,
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(path, 'lastNode'),
			{
				id: `${path}-products`,
				name: 'Products',
				type: 'n8n-nodes-base.splitOut',
				typeVersion: 1,
				position: [220, 0],
				parameters: { fieldToSplitOut: 'body.products', options: {} },
			},
			{
				id: `${path}-upload`,
				name: 'Upload',
				type: nodeType('productDataIntegration'),
				typeVersion: 1,
				position: [440, 0],
				parameters: {
					resource: 'document',
					operation: 'upload',
					source: 'text',
					xml: '={{ "<Products><Product id=\\"" + $json.id + "\\"/></Products>" }}',
				},
				credentials: { [CREDENTIAL_TYPE]: credential },
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Products', type: 'main', index: 0 }]] },
			Products: { main: [[{ node: 'Upload', type: 'main', index: 0 }]] },
		},
	};
}

interface Outcome {
	statuses: number[];
	sessionIds: string[];
	uploads: number;
	rejected429: number;
	failedExecutions: number;
}

/** Sends the executions' webhooks all at once and waits for every answer. */
async function runScenario(path: string): Promise<Outcome> {
	const workflowId = workflowIds[path];
	const before = {
		uploads: n8n.emulator.uploads().length,
		rejected429: n8n.emulator.stats().rejected429,
	};
	const executionsBefore = (await main.listExecutions({ workflowId })).length;
	const answers = await Promise.all(
		Array.from({ length: EXECUTIONS }, async (_, execution) => {
			const products = Array.from({ length: ITEMS_PER_EXECUTION }, (__, index) => ({
				id: `${path}-${execution}-${index}`,
			}));
			const response = await request(`${main.url}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ products }),
				headersTimeout: 10 * 60_000,
				bodyTimeout: 10 * 60_000,
			});
			const text = await response.body.text();
			return { status: response.statusCode, text };
		}),
	);
	// A webhook that did not answer 200 says why, before waiting for executions that may never come.
	const refused = answers.find((answer) => answer.status !== 200);
	if (refused)
		throw new Error(
			`The webhook answered ${refused.status}: ${refused.text.slice(0, 500)}\n${main.log().slice(-3000)}`,
		);
	const executions = await main.waitForExecutions({
		workflowId,
		count: executionsBefore + EXECUTIONS,
	});
	return {
		statuses: answers.map((answer) => answer.status),
		sessionIds: answers.flatMap((answer) =>
			(JSON.parse(answer.text) as Array<{ sessionId?: string }>).map(
				(item) => item.sessionId ?? '',
			),
		),
		uploads: n8n.emulator.uploads().length - before.uploads,
		rejected429: n8n.emulator.stats().rejected429 - before.rejected429,
		failedExecutions: executions.filter((execution) => execution.status !== 'success').length,
	};
}

function expectEveryItemOnce(outcome: Outcome): void {
	expect(outcome.statuses).toEqual(Array(EXECUTIONS).fill(200));
	expect(outcome.failedExecutions).toBe(0);
	const total = EXECUTIONS * ITEMS_PER_EXECUTION;
	// Every item's session id came back, each a distinct upload, and the service got no more.
	expect(outcome.sessionIds.filter((id) => id !== '')).toHaveLength(total);
	expect(new Set(outcome.sessionIds).size).toBe(total);
	expect(outcome.uploads).toBe(total);
	const received = new Set(n8n.emulator.uploads().map((upload) => upload.id));
	expect(outcome.sessionIds.every((id) => received.has(id))).toBe(true);
}

beforeAll(async () => {
	cluster = await startQueueCluster({
		emulator: { bucketCapacity: CAPACITY, leakIntervalMs: INTERVAL_MS },
		credential: {
			customRateLimit: true,
			bucketCapacity: CAPACITY,
			leakIntervalSeconds: INTERVAL_MS / 1000,
		},
		// Two executions at most per worker: all four at once keep both workers busy.
		workers: WORKERS,
		concurrency: 2,
		workersWithoutExecutionsMode: true,
		publish: async (prepared) => {
			const unshared = await prepared.createCredential('Emulator, this process only', {
				customRateLimit: true,
				bucketCapacity: CAPACITY,
				leakIntervalSeconds: INTERVAL_MS / 1000,
				rateLimitSharing: 'process',
			});
			for (const [path, credential] of [
				[SHARED, prepared.credential],
				[UNSHARED, unshared],
			] as const) {
				workflowIds[path] = await prepared.importWorkflow(batchUploadWorkflow(path, credential));
				await prepared.server.activateWorkflow(workflowIds[path]);
			}
		},
	});
	({ n8n, main, workers } = cluster);
});

afterAll(async () => {
	await cluster?.stop();
});

test('shared rate limit: 4 executions of 100 uploads on 2 workers started without EXECUTIONS_MODE, nothing refused, every item once', async () => {
	const outcome = await runScenario(SHARED);
	expectEveryItemOnce(outcome);
	expect(outcome.rejected429).toBe(0);
	// Both workers ran executions: the bucket was shared by two processes, not used by one.
	for (const worker of workers) expect(worker.log()).toMatch(/Worker started execution/);
});

test('each process on its own: refusals slow the workers down, and still every item is uploaded once', async () => {
	const outcome = await runScenario(UNSHARED);
	expectEveryItemOnce(outcome);
	// What the shared limit prevents: the processes overspend the bucket and learn of it from 429s.
	expect(outcome.rejected429).toBeGreaterThan(0);
});

test('the credential, the workflows and the executions the workers ran are rows of the cluster’s PostgreSQL', async () => {
	const workflowId = workflowIds[SHARED];
	const { worker } = await cluster.callWebhook(SHARED, workflowId, {
		products: [{ id: 'row-in-postgres' }],
	});
	expect(worker).toBeGreaterThanOrEqual(0);
	const byNumber = (a: string, b: string) => Number(a) - Number(b);
	const listed = (await main.listExecutions({ workflowId })).map((execution) => execution.id);
	const rows = await cluster.postgres.query(
		`SELECT id FROM execution_entity WHERE "workflowId" = '${workflowId}'`,
	);
	expect(rows.map(([id]) => id).sort(byNumber)).toEqual(listed.sort(byNumber));
	expect(
		await cluster.postgres.query(
			`SELECT count(*) FROM workflow_entity WHERE id IN ('${workflowId}', '${workflowIds[UNSHARED]}')`,
		),
	).toEqual([['2']]);
	expect(
		await cluster.postgres.query(
			`SELECT count(*) FROM credentials_entity WHERE id = '${EMULATOR_CREDENTIAL.id}'`,
		),
	).toEqual([['1']]);
});
