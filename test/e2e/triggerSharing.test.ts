/**
 * Two triggers on one account in a real n8n share the day's listing: each emits every finished
 * upload exactly once, and the service sees one listing a minute for both. Under `n8n start` as it
 * is, then on n8n's durable scheduler (any main may run a poll; the trigger's state is a cursor).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { IDataObject } from 'n8n-workflow';

import { putXml } from '../../scripts/emulator/client';
import { inEdition } from '../../scripts/n8n/edition';
import {
	nodeItems,
	prepareN8n,
	PROJECT_ROOT,
	sleep,
	until,
	type N8nHarness,
	type WorkflowDefinition,
} from './harness';

const TRIGGER = 'When an Upload Finishes';
const MINUTE = 60_000;

/** n8n's durable scheduler for poll triggers, with cursors committed with the execution (n8n 2.41). */
const DURABLE_SCHEDULER: NodeJS.ProcessEnv = {
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
	N8N_SCHEDULER_MATERIALIZATION_INTERVAL: '1',
	N8N_SCHEDULER_EXECUTOR_INTERVAL: '1',
	// The trigger's warnings (a poll skipped, a check failed) in n8n's output, should a wait fail.
	N8N_LOG_LEVEL: 'debug',
};

/** The example workflow that alerts on failed uploads (its trigger polls every minute), as a copy. */
function exampleWorkflow(name: string): WorkflowDefinition {
	const example = JSON.parse(
		readFileSync(join(PROJECT_ROOT, 'examples', 'failed-upload-alert.json'), 'utf8'),
	) as WorkflowDefinition;
	return { ...inEdition(example), id: undefined, name };
}

/**
 * Waits until n8n's publication service activated the workflow: its trigger's poll at activation
 * ran and what the poll left in the workflow's static data is stored.
 */
async function untilPublished(harness: N8nHarness, workflowId: string): Promise<void> {
	let status = 'in_progress';
	await until(
		'the activation',
		async () => {
			({ status } = (
				await harness.server.request<{ data: { status: string } }>(
					'GET',
					`/rest/workflows/${encodeURIComponent(workflowId)}/publication-status`,
				)
			).data);
			return status !== 'in_progress';
		},
		2 * MINUTE,
	);
	expect(status).toBe('published');
}

function sharesTheListing(env: NodeJS.ProcessEnv | undefined) {
	return async () => {
		let n8n: N8nHarness | undefined;
		try {
			n8n = await prepareN8n({ emulator: { processingMs: 100 }, env });
			const harness = n8n;
			const listings = () => harness.emulator.stats().requests['GET /api/xml/{date}'] ?? 0;
			const expected = new Set<string>();
			const uploadBatch = async (label: string) => {
				for (let index = 1; index <= 3; index++) {
					const response = await putXml(
						harness.emulator,
						`<Products>${index === 3 ? '<!--emulator:fail-->' : ''}<Product><Sku>${label}-${index}</Sku></Product></Products>`,
						'/api/xml',
					);
					expect(response.status).toBe(202);
					expected.add(response.text);
				}
			};
			const workflows = [
				await harness.importWorkflow(exampleWorkflow('Alert one')),
				await harness.importWorkflow(exampleWorkflow('Alert two')),
			];
			/** Every item each workflow's trigger emitted so far, by workflow. */
			const emitted = async (): Promise<string[][]> =>
				await Promise.all(
					workflows.map(async (workflowId) => {
						const summaries = await harness.server.listExecutions({ workflowId });
						const runs = await Promise.all(
							summaries
								.filter((execution) => execution.status === 'success')
								.map(async (execution) => await harness.server.getExecution(execution.id)),
						);
						return runs
							.flatMap((run) => nodeItems(run.data, TRIGGER))
							.map((item: IDataObject) => String(item.id));
					}),
				);
			const untilEveryTriggerEmittedAll = async (what: string) =>
				await until(
					what,
					async () =>
						(await emitted()).every((ids) => [...expected].every((id) => ids.includes(id))),
					4 * MINUTE,
				).catch(async (error: Error) => {
					// What each trigger did and what n8n said, for a failure that does not come back.
					const runs = await Promise.all(
						workflows.map(async (workflowId) =>
							(await harness.server.listExecutions({ workflowId })).map(
								(execution) => execution.status,
							),
						),
					);
					throw new Error(
						`${error.message}. Expected ${[...expected].join(', ')}; emitted ${JSON.stringify(await emitted())}; executions ${JSON.stringify(runs)}; listings ${listings()}; n8n said:\n${harness.server.log().split('\n').slice(-60).join('\n')}`,
					);
				});

			// Each activation polls at once and lists for itself: its starting point is now, and what
			// was uploaded before it is history. n8n's publication service (the durable case)
			// activates after it answers, and counting listings there cannot tell the poll at
			// activation from the other trigger's scheduled ones (seconds of the minute of their own).
			for (const [index, workflowId] of workflows.entries()) {
				await harness.server.activateWorkflow(workflowId);
				if (env === DURABLE_SCHEDULER) await untilPublished(harness, workflowId);
				else await until('the poll at activation', () => listings() >= index + 1, MINUTE);
			}
			const since = Date.now();
			const listedBefore = listings();

			await uploadBatch('FIRST');
			await untilEveryTriggerEmittedAll('the first uploads reported by both triggers');
			await uploadBatch('SECOND');
			await untilEveryTriggerEmittedAll('the second uploads reported by both triggers');
			const polled = listings();
			await until('the next scheduled poll', () => listings() > polled, 2 * MINUTE);
			await sleep(5000);

			for (const ids of await emitted()) expect([...ids].sort()).toEqual([...expected].sort());
			// One listing a minute for both triggers (two without sharing), the minute under way included.
			const minutes = (Date.now() - since) / MINUTE;
			expect(listings() - listedBefore).toBeLessThanOrEqual(Math.ceil(minutes) + 1);
		} finally {
			await n8n?.stop();
		}
	};
}

describe('two triggers on one account in a running n8n', () => {
	test(
		'under n8n start: each emits every finished upload once, and the service sees one listing a minute',
		sharesTheListing(undefined),
	);

	test(
		'on the durable scheduler: each emits every finished upload once, and the service sees one listing a minute',
		sharesTheListing(DURABLE_SCHEDULER),
	);
});
