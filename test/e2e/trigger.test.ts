/**
 * The trigger under `n8n start` with the example workflow that alerts on failed uploads: uploads
 * made by another client are reported once each when they finish, and the workflow routes the failed
 * ones to the alert. n8n polls at activation, then every minute (it refuses anything shorter): the
 * test polls on demand by publishing the workflow again, which also carries the trigger's state
 * through n8n's database as a restart does, and waits for one scheduled poll at the end.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { putXml, type CallOptions } from '../../scripts/emulator/client';
import { inEdition } from '../../scripts/n8n/edition';
import {
	CREDENTIAL_TYPE,
	nodeItems,
	nodeType,
	prepareN8n,
	PROJECT_ROOT,
	sleep,
	until,
	type ExecutionSummary,
	type N8nHarness,
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

describe('the trigger in a running n8n', () => {
	let n8n: N8nHarness;
	let workflowId: string;
	/** Uploads made before the workflow was activated. */
	let before: string[];

	async function upload(sku: string, options: { fail?: boolean; call?: CallOptions } = {}): Promise<string> {
		const response = await putXml(n8n.emulator, document(sku, options), '/api/xml', options.call);
		expect(response.status).toBe(202);
		return response.text;
	}

	function listings(): number {
		return n8n.emulator.stats().requests['GET /api/xml/{date}'] ?? 0;
	}

	/** Every finished execution of the workflow so far with its run data, oldest first. */
	async function executions(): Promise<StoredExecution[]> {
		const summaries: ExecutionSummary[] = await n8n.server.listExecutions({ workflowId });
		const finished = summaries
			.filter((execution) => FINISHED.has(execution.status))
			.sort((a, b) => Number(a.id) - Number(b.id));
		return await Promise.all(finished.map(async (execution) => await n8n.server.getExecution(execution.id)));
	}

	/** Waits until no upload is processing any more. */
	async function untilProcessed(): Promise<void> {
		await until('the uploads to be processed', () => n8n.emulator.uploads().every((upload) => upload.state !== 'processing'), 30_000);
	}

	/** A poll now: the workflow published again polls at once, with the state the last poll saved. */
	async function poll(): Promise<void> {
		const polled = listings();
		await n8n.server.deactivateWorkflow(workflowId);
		await n8n.server.activateWorkflow(workflowId);
		await until('the poll at activation', () => listings() > polled, 60_000);
	}

	function emitted(runs: StoredExecution[]): IDataObject[] {
		return runs.flatMap((execution) => nodeItems(execution.data, TRIGGER));
	}

	beforeAll(async () => {
		n8n = await prepareN8n({ emulator: { processingMs: 100 } });
		const example = JSON.parse(
			readFileSync(join(PROJECT_ROOT, 'examples', 'failed-upload-alert.json'), 'utf8'),
		) as WorkflowDefinition;
		// A copy with an id of its own: the example itself is imported by examples.test.ts into the same n8n.
		workflowId = await n8n.importWorkflow({ ...inEdition(example), id: undefined });
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

		const secondBatch = { succeeded: [await upload('NEW-4')], failed: [await upload('NEW-5', { fail: true })] };
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

		expect(runs.every((execution) => execution.mode === 'trigger' && execution.status === 'success')).toBe(true);
		const items = emitted(runs);
		const reported = items.map((item) => String(item.id));
		expect([...reported].sort()).toEqual([...expected.keys()].sort());
		for (const id of [...before, otherCustomer]) expect(reported).not.toContain(id);
		for (const item of items) {
			const status = expected.get(String(item.id));
			expect(item).toMatchObject({ event: 'uploadFinished', status, sentBy: expect.objectContaining({ serviceId: 1001 }) });
			if (status === 'failed') {
				expect(item).toMatchObject({
					errorUrl: `${n8n.emulator.url}/api/status/${String(item.id)}/errors`,
					errorMessage: 'Processing of the document ended with 1 error(s).',
					errorDocument: expect.objectContaining({ errors: [expect.objectContaining({ code: 'ProcessingFailed' })] }),
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
			expect(alert.alert).toMatch(new RegExp(`^Upload ${String(alert.sessionId)} from North Shop \\(.+\\) failed: Processing of the document ended with 1 error\\(s\\)\\.$`));
		}
		expect(processed.map((item) => item.sessionId).sort()).toEqual(
			[...firstBatch.succeeded, ...secondBatch.succeeded].sort(),
		);
		expect(processed.every((item) => item.status === 'succeeded')).toBe(true);
	});

	test('the editor: the credential test passes, a wrong password is refused, the customer list loads', async () => {
		const credential = n8n.credential;
		const testCredential = async (password: string) =>
			await n8n.server.request<{ data: { status: string; message: string } }>('POST', '/rest/credentials/test', {
				credentials: { ...credential, data: { ...credential.data, password } },
			});

		expect((await testCredential(credential.data.password)).data).toMatchObject({ status: 'OK' });
		expect((await testCredential('not-the-password')).data).toEqual({
			status: 'Error',
			message: expect.stringContaining('Authorization denied (401)'),
		});

		const { data: customers } = await n8n.server.request<{ data: { results: Array<{ name: string; value: string }> } }>(
			'POST',
			'/rest/dynamic-node-parameters/resource-locator-results',
			{
				path: 'options.customer',
				methodName: 'searchCustomers',
				nodeTypeAndVersion: { name: nodeType('productDataIntegration'), version: 1 },
				currentNodeParameters: { resource: 'document', operation: 'upload', source: 'text', xml: '', options: {} },
				credentials: { [CREDENTIAL_TYPE]: { id: credential.id, name: credential.name } },
			},
		);
		expect(customers.results.map(({ name, value }) => ({ name, value }))).toEqual([
			{ name: 'Head Office (1003)', value: '1003' },
			{ name: 'North Shop (1001, the credential’s own)', value: '1001' },
			{ name: 'South Shop (1002)', value: '1002' },
		]);
	});
});
