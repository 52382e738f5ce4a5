/**
 * The trigger under `n8n start` with the example workflow that alerts on failed uploads: uploads
 * made by another client are reported once each when they finish, and the workflow routes the failed
 * ones to the alert. n8n polls at activation, then every minute (it refuses anything shorter): the
 * test polls on demand by publishing the workflow again, which also carries the trigger's state
 * through n8n's database as a restart does, and waits for one scheduled poll at the end.
 *
 * Then the same on n8n's durable scheduler with durable cursors, where the trigger's state is a
 * cursor n8n commits with the execution a poll starts: the uploads of the first minute after
 * activation, uploads made while n8n is down, and a poll that runs twice - a main that stalls
 * mid-poll past its lease while a second main on the same database takes the poll over.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { putXml, type CallOptions } from '../../scripts/emulator/client';
import { inEdition } from '../../scripts/n8n/edition';
import { postControl } from '../helpers/service';
import {
	CREDENTIAL_TYPE,
	nodeItems,
	nodeType,
	OWNER,
	prepareN8n,
	PROJECT_ROOT,
	sleep,
	until,
	type ExecutionSummary,
	type N8nHarness,
	type N8nServer,
	type StoredExecution,
	type WorkflowDefinition,
} from './harness';

const TRIGGER = 'When an Upload Finishes';
const ALERT = 'Alert the Catalogue Team';
const PROCESSED = 'Processed';

const FINISHED: ReadonlySet<string> = new Set(['success', 'error', 'crashed', 'canceled']);
const SOUTH: CallOptions = { customer: { customerId: '1002', customerIdType: 'ServiceID' } };

function document(sku: string, { fail = false } = {}): string {
	return `<Products>${fail ? '<!--emulator:fail-->' : ''}<Product><Sku>${sku}</Sku></Product></Products>`;
}

/** n8n's durable scheduler for poll triggers, with cursors committed with the execution (n8n 2.41). */
const DURABLE_SCHEDULER: NodeJS.ProcessEnv = {
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
	// Due polls are claimed within a second instead of five, and a stalled main's poll is taken
	// over after 20 s instead of a minute.
	N8N_SCHEDULER_MATERIALIZATION_INTERVAL: '1',
	N8N_SCHEDULER_EXECUTOR_INTERVAL: '1',
	N8N_SCHEDULER_LEASE_DURATION: '20',
	N8N_SCHEDULER_REAPER_INTERVAL: '2',
};

/** What this file uses of Node's own SQLite client (Node 24; the project's Node types predate it). */
interface SqliteDatabase {
	exec(sql: string): void;
	close(): void;
}
const { DatabaseSync } = createRequire(__filename)('node:sqlite') as {
	DatabaseSync: new (path: string) => SqliteDatabase;
};

/** SQLite's SQLITE_BUSY: another connection holds the lock asked for. */
const SQLITE_BUSY = 5;

/**
 * Stalls `main` (SIGSTOP) at a moment it holds no write transaction on its SQLite database: stopped
 * inside one, it would keep every other process, a second main starting included, from writing to
 * the database (SQLITE_BUSY) for as long as it stalls. Stalled, it cannot begin one; while it holds
 * one, it goes on for a moment and is stalled again.
 */
async function pauseOutsideTransaction(main: N8nServer, databaseFile: string): Promise<void> {
	// SQLite would create a missing file, and find no lock in it.
	if (!existsSync(databaseFile)) throw new Error(`No database at ${databaseFile}`);
	const database = new DatabaseSync(databaseFile);
	try {
		for (const deadline = Date.now() + 5000; ; await sleep(50)) {
			main.pause();
			// A process running on another core stops at its next interruption, not as the signal is sent.
			await sleep(20);
			try {
				database.exec('BEGIN EXCLUSIVE');
				database.exec('ROLLBACK');
				return;
			} catch (error) {
				main.resume();
				if ((error as { errcode?: number }).errcode !== SQLITE_BUSY || Date.now() > deadline)
					throw error;
			}
		}
	} finally {
		database.close();
	}
}

/** The example workflow that alerts on failed uploads, as a copy with an id of its own. */
function exampleWorkflow(): WorkflowDefinition {
	const example = JSON.parse(
		readFileSync(join(PROJECT_ROOT, 'examples', 'failed-upload-alert.json'), 'utf8'),
	) as WorkflowDefinition;
	// examples.test.ts imports the example itself, with its id, into the same n8n.
	return { ...inEdition(example), id: undefined };
}

async function uploadTo(
	n8n: N8nHarness,
	sku: string,
	options: { fail?: boolean; call?: CallOptions } = {},
): Promise<string> {
	const response = await putXml(n8n.emulator, document(sku, options), '/api/xml', options.call);
	expect(response.status).toBe(202);
	return response.text;
}

function listingsOf(n8n: N8nHarness): number {
	return n8n.emulator.stats().requests['GET /api/xml/{date}'] ?? 0;
}

/** Every finished execution of the workflow so far with its run data, oldest first. */
async function executionsOf(server: N8nServer, workflowId: string): Promise<StoredExecution[]> {
	const summaries: ExecutionSummary[] = await server.listExecutions({ workflowId });
	const finished = summaries
		.filter((execution) => FINISHED.has(execution.status))
		.sort((a, b) => Number(a.id) - Number(b.id));
	return await Promise.all(
		finished.map(async (execution) => await server.getExecution(execution.id)),
	);
}

function emitted(runs: StoredExecution[]): IDataObject[] {
	return runs.flatMap((execution) => nodeItems(execution.data, TRIGGER));
}

describe('the trigger in a running n8n', () => {
	let n8n: N8nHarness;
	let workflowId: string;
	/** Uploads made before the workflow was activated. */
	let before: string[];

	const upload = async (sku: string, options: { fail?: boolean; call?: CallOptions } = {}) =>
		await uploadTo(n8n, sku, options);
	const listings = () => listingsOf(n8n);
	const executions = async () => await executionsOf(n8n.server, workflowId);

	/** Waits until no upload is processing any more. */
	async function untilProcessed(): Promise<void> {
		await until(
			'the uploads to be processed',
			() => n8n.emulator.uploads().every((upload) => upload.state !== 'processing'),
			30_000,
		);
	}

	/** A poll now: the workflow published again polls at once, with the state the last poll saved. */
	async function poll(): Promise<void> {
		const polled = listings();
		await n8n.server.deactivateWorkflow(workflowId);
		await n8n.server.activateWorkflow(workflowId);
		await until('the poll at activation', () => listings() > polled, 60_000);
	}

	beforeAll(async () => {
		n8n = await prepareN8n({ emulator: { processingMs: 100 } });
		workflowId = await n8n.importWorkflow(exampleWorkflow());
		before = [await upload('OLD-1'), await upload('OLD-2', { fail: true })];
	});

	afterAll(async () => {
		await n8n?.stop();
	});

	test('reports each upload once when it finishes, not those made before activation, and alerts on the failed ones', async () => {
		// The poll at activation lists the day: what it finds is history.
		await n8n.server.activateWorkflow(workflowId);
		await until('the poll at activation', () => listings() >= 1, 60_000);

		const firstBatch = {
			succeeded: [await upload('NEW-1'), await upload('NEW-2')],
			failed: [await upload('NEW-3', { fail: true })],
		};
		// Another customer node of the same account: not the trigger's.
		const otherCustomer = await upload('SOUTH-1', { call: SOUTH });
		await untilProcessed();
		await poll();

		const [first] = await n8n.server.waitForExecutions({ workflowId, count: 1 });
		expect(first).toMatchObject({ mode: 'trigger', status: 'success' });

		const secondBatch = {
			succeeded: [await upload('NEW-4')],
			failed: [await upload('NEW-5', { fail: true })],
		};
		await untilProcessed();
		await poll();
		const expected = new Map<string, 'succeeded' | 'failed'>();
		for (const batch of [firstBatch, secondBatch]) {
			for (const id of batch.succeeded) expected.set(id, 'succeeded');
			for (const id of batch.failed) expected.set(id, 'failed');
		}
		let runs: StoredExecution[] = [];
		await until(
			'every new upload to be reported',
			async () => {
				runs = await executions();
				const ids = new Set(emitted(runs).map((item) => String(item.id)));
				return [...expected.keys()].every((id) => ids.has(id));
			},
			60_000,
		);
		// A poll on demand and the next one n8n schedules (within a minute of the activation) after
		// the last report: nothing is reported twice.
		await poll();
		const polled = listings();
		await until('the scheduled poll', () => listings() > polled, 90_000);
		await sleep(2000);
		runs = await executions();

		expect(
			runs.every((execution) => execution.mode === 'trigger' && execution.status === 'success'),
		).toBe(true);
		const items = emitted(runs);
		const reported = items.map((item) => String(item.id));
		expect([...reported].sort()).toEqual([...expected.keys()].sort());
		for (const id of [...before, otherCustomer]) expect(reported).not.toContain(id);
		for (const item of items) {
			const status = expected.get(String(item.id));
			expect(item).toMatchObject({
				event: 'uploadFinished',
				status,
				sentBy: expect.objectContaining({ serviceId: 1001 }),
			});
			if (status === 'failed') {
				expect(item).toMatchObject({
					errorUrl: `${n8n.emulator.url}/api/status/${String(item.id)}/errors`,
					errorMessage: 'Processing of the document ended with 1 error(s).',
					errorDocument: expect.objectContaining({
						errors: [expect.objectContaining({ code: 'ProcessingFailed' })],
					}),
				});
			} else {
				expect(item).toMatchObject({ errorUrl: null, errorMessage: null });
			}
		}

		// The IF node of the example: failed uploads go to the alert, the others on.
		const alerts = runs.flatMap((execution) =>
			execution.data.resultData.runData[ALERT] ? nodeItems(execution.data, ALERT) : [],
		);
		const processed = runs.flatMap((execution) =>
			execution.data.resultData.runData[PROCESSED] ? nodeItems(execution.data, PROCESSED) : [],
		);
		const failedIds = [...firstBatch.failed, ...secondBatch.failed];
		expect(alerts.map((item) => item.sessionId).sort()).toEqual([...failedIds].sort());
		for (const alert of alerts) {
			expect(alert.alert).toMatch(
				new RegExp(
					`^Upload ${String(alert.sessionId)} from North Shop \\(.+\\) failed: Processing of the document ended with 1 error\\(s\\)\\.$`,
				),
			);
		}
		expect(processed.map((item) => item.sessionId).sort()).toEqual(
			[...firstBatch.succeeded, ...secondBatch.succeeded].sort(),
		);
		expect(processed.every((item) => item.status === 'succeeded')).toBe(true);
	});

	test('the editor: the credential test passes, a wrong password is refused, the customer list loads', async () => {
		const credential = n8n.credential;
		const testCredential = async (password: string) =>
			await n8n.server.request<{ data: { status: string; message: string } }>(
				'POST',
				'/rest/credentials/test',
				{
					credentials: { ...credential, data: { ...credential.data, password } },
				},
			);

		expect((await testCredential(credential.data.password)).data).toMatchObject({ status: 'OK' });
		expect((await testCredential('not-the-password')).data).toEqual({
			status: 'Error',
			message: expect.stringContaining('Authorization denied (401)'),
		});

		const { data: customers } = await n8n.server.request<{
			data: { results: Array<{ name: string; value: string }> };
		}>('POST', '/rest/dynamic-node-parameters/resource-locator-results', {
			path: 'options.customer',
			methodName: 'searchCustomers',
			nodeTypeAndVersion: { name: nodeType('productDataIntegration'), version: 1 },
			currentNodeParameters: {
				resource: 'document',
				operation: 'upload',
				source: 'text',
				xml: '',
				options: {},
			},
			credentials: { [CREDENTIAL_TYPE]: { id: credential.id, name: credential.name } },
		});
		expect(customers.results.map(({ name, value }) => ({ name, value }))).toEqual([
			{ name: 'Head Office (1003)', value: '1003' },
			{ name: 'North Shop (1001, the credential’s own)', value: '1001' },
			{ name: 'South Shop (1002)', value: '1002' },
		]);
	});
});

describe('the trigger on n8n’s durable scheduler with durable cursors', () => {
	let n8n: N8nHarness;
	let workflowId: string;
	/** The mains running now: the first one (restarted), and a second on the same database. */
	const mains: N8nServer[] = [];
	const expected = new Set<string>();

	async function uploadBatch(label: string, count: number): Promise<void> {
		for (let index = 1; index <= count; index++)
			expected.add(await uploadTo(n8n, `${label}-${index}`, { fail: index === count }));
	}

	/** Waits until every upload made so far has been emitted, asking `main`; the trigger's items so far. */
	async function untilEmitted(
		what: string,
		main: N8nServer,
		timeoutMs: number,
	): Promise<IDataObject[]> {
		let items: IDataObject[] = [];
		await until(
			what,
			async () => {
				const runs = await executionsOf(main, workflowId);
				items = emitted(runs.filter((execution) => execution.status === 'success'));
				const ids = new Set(items.map((item) => String(item.id)));
				return [...expected].every((id) => ids.has(id));
			},
			timeoutMs,
		);
		return items;
	}

	beforeAll(async () => {
		n8n = await prepareN8n({ emulator: { processingMs: 100 }, env: DURABLE_SCHEDULER });
		mains.push(n8n.server);
		workflowId = await n8n.importWorkflow(exampleWorkflow());
	});

	afterAll(async () => {
		// The harness stops the n8n it started; the mains started here (a restart, a second one) too.
		await Promise.all(mains.map(async (main) => await main.stop()));
		await n8n?.stop();
	});

	test('reports every finished upload once: the first minute, across a restart, and a poll taken over from a stalled main', async () => {
		const history = [await uploadTo(n8n, 'OLD-1'), await uploadTo(n8n, 'OLD-2', { fail: true })];
		await n8n.server.activateWorkflow(workflowId);
		await until('the poll at activation', () => listingsOf(n8n) >= 1, 60_000);
		// Uploaded in the first minute after activation, before n8n's first scheduled poll.
		await uploadBatch('FIRST', 3);
		await untilEmitted('the first minute’s uploads', mains[0], 150_000);

		// Uploads made while n8n is down are reported after it starts again.
		await mains[0].stop();
		await uploadBatch('WHILE-DOWN', 2);
		mains[0] = await n8n.folder.start({ env: DURABLE_SCHEDULER });
		await mains[0].ensureOwner(OWNER);
		await untilEmitted('the uploads made while n8n was down', mains[0], 150_000);

		// The next poll's listing answers late; its main stalls mid-poll past its lease, a second
		// main on the same database takes the poll over with the same cursor, then the first goes on.
		await uploadBatch('TAKEN-OVER', 2);
		const listed = listingsOf(n8n);
		await postControl(n8n.emulator.url, 'faults', {
			count: 1,
			kind: 'slow',
			delayMs: 10_000,
			path: '/api/xml/',
		});
		await until('the next scheduled poll', () => listingsOf(n8n) > listed, 90_000);
		await pauseOutsideTransaction(mains[0], join(n8n.folder.path, '.n8n', 'database.sqlite'));
		try {
			const second = await n8n.folder.start({ env: DURABLE_SCHEDULER });
			mains.push(second);
			await second.ensureOwner(OWNER);
			await untilEmitted('the poll taken over by the second main', second, 150_000);
		} finally {
			mains[0].resume();
		}
		// The stalled main's own run of that poll goes on, and both mains poll on: nothing is
		// reported again.
		const polled = listingsOf(n8n);
		await until('the next scheduled poll', () => listingsOf(n8n) > polled, 90_000);
		await sleep(5000);

		const runs = await executionsOf(mains[1], workflowId);
		const reported = emitted(runs.filter((execution) => execution.status === 'success')).map(
			(item) => String(item.id),
		);
		expect([...reported].sort()).toEqual([...expected].sort());
		for (const id of history) expect(reported).not.toContain(id);
		// Its clock having jumped by the stall, the stalled main's run may end at its time budget:
		// a failed execution that reports nothing, and no other failure.
		for (const run of runs.filter((execution) => execution.status !== 'success')) {
			expect(run.data.resultData.error?.message).toMatch(
				/^The poll was stopped after \d+ s, its time budget/,
			);
		}
	});
});
