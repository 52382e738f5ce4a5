import { randomUUID } from 'node:crypto';

import { Container } from '@n8n/di';
import { PollContext, PollTriggerExecutor } from 'n8n-core';
import type { IDataObject, INode, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegrationTrigger } from '../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node';
import { putXml } from '../../scripts/emulator/client';
import { runPoll } from '../../scripts/n8n/in-process';
import { createAdditionalData, createWorkflow } from '../../scripts/n8n/in-process/execute';
import { nodeTypeName, nodeUnderTest } from '../../scripts/n8n/in-process/nodeTypes';
import { setUp } from '../../scripts/n8n/in-process/services';
import { useEmulator } from '../helpers/emulator';

/**
 * The trigger as n8n 2.41's durable scheduler with durable cursors runs it. The node's static data
 * is a copy of a cursor n8n keeps in a table of its own; n8n stores the copy back when a scheduled
 * poll returns nothing, or with the execution when a poll emits. The poll it runs at activation
 * goes through the same executor as a test poll (`testingTrigger`), which stores nothing when it
 * emits nothing; the workflow's own static data (the global part) is saved after activating.
 * (n8n 2.41.1: PollTriggerExecutor.create in n8n-core, PollTriggerTaskHandler.execute and
 * TriggerExecutionContextFactory.getExecutePollFunctions in n8n.)
 */

const trigger = new ProductDataIntegrationTrigger();
const PARAMETERS: INodeParameters = {
	events: ['uploadFinished'],
	status: 'any',
	pollTimes: { item: [{ mode: 'everyMinute' }] },
};

interface Stored {
	/** The workflow's static data as n8n's workflow table has it. */
	workflow: IDataObject;
	/** The node's cursor as n8n's poller state table has it. */
	cursor: IDataObject;
}

const { emulator, credentials } = useEmulator({ processingMs: 0 }, 'test');
let node: INode;

beforeEach(() => {
	node = nodeUnderTest(trigger, PARAMETERS);
});

async function upload(): Promise<string> {
	const response = await putXml(emulator, '<Products><Product><Sku>A</Sku></Product></Products>');
	expect(response.status).toBe(202);
	return response.text.trim();
}

/** One poll of the node on the durable scheduler; what n8n stores afterwards, and the ids emitted. */
async function durablePoll(
	stored: Stored,
	{ atActivation = false } = {},
): Promise<Stored & { ids: string[] }> {
	await setUp();
	const workflow = createWorkflow(
		[node],
		{ [nodeTypeName(trigger)]: trigger },
		{ staticData: structuredClone(stored.workflow), active: true },
	);
	const snapshot = structuredClone(stored.cursor);
	let cursor = stored.cursor;
	let emitted: INodeExecutionData[] = [];
	let failure: Error | undefined;
	const context = new PollContext(
		workflow,
		node,
		createAdditionalData(credentials(), randomUUID()),
		'trigger',
		atActivation ? 'activate' : 'update',
		(data) => {
			emitted = data[0] ?? [];
			cursor = structuredClone(snapshot);
		},
		(error) => {
			failure = error;
		},
		async () => {
			cursor = structuredClone(snapshot);
		},
		async (poll) => await poll(),
		() => snapshot,
	);
	await Container.get(PollTriggerExecutor).create(
		workflow,
		node,
		context,
		() => true,
	)(atActivation);
	if (failure) throw failure;
	const saved = JSON.parse(JSON.stringify(workflow.staticData)) as IDataObject;
	delete saved.__dataChanged;
	return { workflow: saved, cursor, ids: emitted.map((item) => String(item.json.id)) };
}

describe('the trigger on the durable scheduler with durable cursors', () => {
	it('reports the uploads made between activation and the first scheduled poll', async () => {
		const history = await upload();
		const activated = await durablePoll({ workflow: {}, cursor: {} }, { atActivation: true });
		expect(activated.ids).toEqual([]);
		// n8n dropped the activation poll's own state, as it does.
		expect(activated.cursor).toEqual({});

		const firstMinute = [await upload(), await upload()];
		const first = await durablePoll(activated);
		expect(first.ids.sort()).toEqual([...firstMinute].sort());
		expect(first.ids).not.toContain(history);

		const next = await upload();
		const second = await durablePoll(first);
		expect(second.ids).toEqual([next]);
		// The starting point has served: once the node's own state is stored, it is removed.
		expect(second.workflow.global).toEqual({});
	});

	it('emits nothing twice from the cursor n8n stored with an emission', async () => {
		const activated = await durablePoll({ workflow: {}, cursor: {} }, { atActivation: true });
		const first = await durablePoll(activated);
		const id = await upload();
		const emitted = await durablePoll(first);
		expect(emitted.ids).toEqual([id]);
		// A poll of the stored cursor after that: nothing twice.
		expect((await durablePoll(emitted)).ids).toEqual([]);
		expect((await durablePoll(emitted)).ids).toEqual([]);
	});

	it('does not take the starting point of an activation days ago for its own', async () => {
		const old = await durablePoll({ workflow: {}, cursor: {} }, { atActivation: true });
		const stale = JSON.parse(
			JSON.stringify(old.workflow).replace(
				/"listedAt":\d+/,
				`"listedAt":${Date.now() - 3 * 24 * 60 * 60_000}`,
			),
		) as IDataObject;
		const history = await upload();
		const first = await durablePoll({ workflow: stale, cursor: {} });
		expect(first.ids).toEqual([]);
		expect(first.ids).not.toContain(history);
	});
});

describe('the trigger on the durable scheduler without durable cursors', () => {
	it('loses and doubles nothing although n8n saves its static data only when a poll emits', async () => {
		// The poll at activation: n8n saves the workflow's static data after activating.
		let saved = (await runPoll(trigger, PARAMETERS, credentials(), {})).staticData;
		const expected: string[] = [];
		const reported: string[] = [];
		for (let round = 0; round < 4; round++) {
			if (round % 2 === 0) expected.push(await upload());
			const result = await runPoll(trigger, PARAMETERS, credentials(), saved);
			if (result.error) throw result.error;
			if (result.output !== null) {
				reported.push(...result.output[0].map((item) => String(item.json.id)));
				saved = result.staticData;
			}
		}
		expect(reported.sort()).toEqual(expected.sort());
	});
});
