// Running a node in a workflow, and one poll of a trigger.
import { randomUUID } from 'node:crypto';

import { Container } from '@n8n/di';
import { PollContext, PollTriggerExecutor } from 'n8n-core';
import type {
	ExecutionError,
	ICredentialDataDecryptedObject,
	IDataObject,
	INode,
	INodeExecutionData,
	INodeType,
	IRun,
	WorkflowExecuteMode,
} from 'n8n-workflow';

import { createAdditionalData, createWorkflow, execute } from './execute';
import {
	MANUAL_TRIGGER_TYPE,
	ManualTrigger,
	NODE_NAME,
	type NodeParameters,
	nodeTypeName,
	nodeUnderTest,
	START_NAME,
} from './nodeTypes';
import { setUp } from './services';

export interface RunNodeOptions {
	node: INodeType;
	parameters: NodeParameters;
	/** Input items of the node; default one empty item, as after a Manual Trigger. */
	items?: INodeExecutionData[];
	credentials?: ICredentialDataDecryptedObject;
	/** The node setting "On Error: Continue (using regular output)". */
	continueOnFail?: boolean;
	/** The node settings "Retry On Fail": n8n re-runs the node with all its items (2-5 tries). */
	retryOnFail?: { maxTries: number; waitBetweenTriesMs?: number };
	executionId?: string;
	abortSignal?: AbortSignal;
	mode?: WorkflowExecuteMode;
}

export interface RunNodeResult {
	output: INodeExecutionData[][];
	error?: ExecutionError;
	run: IRun;
}

export async function runNode(options: RunNodeOptions): Promise<RunNodeResult> {
	await setUp();
	const { node: nodeType, retryOnFail } = options;
	const type = nodeTypeName(nodeType);
	const start: INode = {
		id: randomUUID(),
		name: START_NAME,
		type: MANUAL_TRIGGER_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: {},
	};
	const node: INode = {
		...nodeUnderTest(nodeType, options.parameters),
		onError: options.continueOnFail ? 'continueRegularOutput' : 'stopWorkflow',
		// n8n reads a wait of 0 as "unset" and waits 1 s; 1 ms keeps retries fast.
		...(retryOnFail && {
			retryOnFail: true,
			maxTries: retryOnFail.maxTries,
			waitBetweenTries: Math.max(1, retryOnFail.waitBetweenTriesMs ?? 1),
		}),
	};
	const workflow = createWorkflow([start, node], {
		[MANUAL_TRIGGER_TYPE]: new ManualTrigger(),
		[type]: nodeType,
	});
	const run = await execute(
		workflow,
		workflow.getNode(START_NAME) as INode,
		options.mode ?? 'manual',
		options.credentials ?? {},
		options.executionId ?? randomUUID(),
		{ [START_NAME]: options.items ?? [{ json: {} }] },
		options.abortSignal,
	);
	const task = run.data.resultData.runData[NODE_NAME]?.at(-1);
	return {
		output: (task?.data?.main ?? []).map((items) => items ?? []),
		error: task?.error ?? run.data.resultData.error,
		run,
	};
}

export interface RunPollResult {
	output: INodeExecutionData[][] | null;
	staticData: IDataObject;
	error?: Error;
}

export async function runPoll(
	trigger: INodeType,
	parameters: NodeParameters,
	credentials: ICredentialDataDecryptedObject,
	staticData: IDataObject = {},
	mode: 'trigger' | 'manual' = 'trigger',
): Promise<RunPollResult> {
	await setUp();
	const workflow = createWorkflow(
		[nodeUnderTest(trigger, parameters)],
		{ [nodeTypeName(trigger)]: trigger },
		{ staticData: structuredClone(staticData), active: mode === 'trigger' },
	);
	const node = workflow.getNode(NODE_NAME) as INode;
	let output: INodeExecutionData[][] | null = null;
	let error: Error | undefined;

	if (mode === 'manual') {
		const run = await execute(workflow, node, 'manual', credentials, randomUUID());
		output =
			run.data.resultData.runData[NODE_NAME]?.at(-1)?.data?.main.map((items) => items ?? []) ??
			null;
		error = run.data.resultData.error;
	} else {
		// The path of an active workflow: the executor hands a result to __emit (which starts
		// an execution) and a failure to __emitError (which records a failed execution).
		const context = new PollContext(
			workflow,
			node,
			createAdditionalData(credentials, randomUUID()),
			'trigger',
			'activate',
			(data) => {
				output = data;
			},
			(thrown) => {
				error = thrown;
			},
		);
		await Container.get(PollTriggerExecutor).create(workflow, node, context, () => true)();
	}

	const after = JSON.parse(JSON.stringify(workflow.staticData)) as IDataObject;
	delete after.__dataChanged;
	return { output, staticData: after, error };
}
