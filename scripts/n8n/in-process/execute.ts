// The workflow and execute plumbing: what n8n's WorkflowExecute, PollContext and LoadOptionsContext
// are handed (additional data, workflow, lifecycle hooks).
import { ExecutionLifecycleHooks, ExternalSecretsProxy, WorkflowExecute } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	INode,
	INodeExecutionData,
	INodeType,
	IRun,
	IWorkflowExecuteAdditionalData,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import { createRunExecutionData, UnexpectedError, Workflow } from 'n8n-workflow';

import { HarnessCredentialsHelper } from './credentials';
import { HarnessNodeTypes, MAIN } from './nodeTypes';

export const WORKFLOW_ID = 'harness-workflow';

function unsupported(what: string) {
	return async (): Promise<never> => {
		throw new UnexpectedError(`${what} is not available in the test harness`);
	};
}

export function createAdditionalData(
	credentials: ICredentialDataDecryptedObject,
	executionId: string,
	hooks?: ExecutionLifecycleHooks,
): IWorkflowExecuteAdditionalData {
	const base = 'http://127.0.0.1:5678/';
	return {
		credentialsHelper: new HarnessCredentialsHelper(credentials),
		executeWorkflow: unsupported('Executing a sub-workflow'),
		getRunExecutionData: async () => undefined,
		getRuntimeCredential: async () => undefined,
		startRunnerTask: unsupported('The task runner'),
		logAiEvent: () => {},
		executionId,
		workflowId: WORKFLOW_ID,
		hooks,
		currentNodeExecutionIndex: 0,
		restApiUrl: `${base}rest`,
		instanceBaseUrl: base,
		formBaseUrl: `${base}form`,
		formWaitingBaseUrl: `${base}form-waiting`,
		formTestBaseUrl: `${base}form-test`,
		webhookBaseUrl: `${base}webhook`,
		webhookWaitingBaseUrl: `${base}webhook-waiting`,
		webhookTestBaseUrl: `${base}webhook-test`,
		mcpBaseUrl: `${base}mcp`,
		mcpTestBaseUrl: `${base}mcp-test`,
		variables: {},
		externalSecretsProxy: new ExternalSecretsProxy(),
	};
}

export function createWorkflow(
	nodes: INode[],
	nodeTypes: Record<string, INodeType>,
	{ staticData, active = false }: { staticData?: IDataObject; active?: boolean } = {},
): Workflow {
	const [first, second] = nodes;
	return new Workflow({
		id: WORKFLOW_ID,
		name: 'Harness',
		nodes,
		connections: second
			? { [first.name]: { main: [[{ node: second.name, type: MAIN, index: 0 }]] } }
			: {},
		active,
		nodeTypes: new HarnessNodeTypes(nodeTypes),
		staticData,
		settings: { executionOrder: 'v1' },
	});
}

function createHooks(mode: WorkflowExecuteMode, executionId: string, workflow: Workflow) {
	return new ExecutionLifecycleHooks(mode, executionId, {
		id: workflow.id,
		name: workflow.name ?? '',
		active: false,
		isArchived: false,
		nodes: Object.values(workflow.nodes),
		connections: workflow.connectionsBySourceNode,
		createdAt: new Date(),
		updatedAt: new Date(),
		activeVersionId: null,
	});
}

/** Runs `workflow` from `start` with pinned data as n8n's WorkflowExecute does; `abortSignal` cancels it. */
export async function execute(
	workflow: Workflow,
	start: INode,
	mode: WorkflowExecuteMode,
	credentials: ICredentialDataDecryptedObject,
	executionId: string,
	pinData?: Record<string, INodeExecutionData[]>,
	abortSignal?: AbortSignal,
): Promise<IRun> {
	const hooks = createHooks(mode, executionId, workflow);
	const additionalData = createAdditionalData(credentials, executionId, hooks);
	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack: [{ node: start, data: { main: [[{ json: {} }]] }, source: null }],
		},
		resultData: { pinData },
	});
	const execution = new WorkflowExecute(
		additionalData,
		mode,
		runExecutionData,
	).processRunExecutionData(workflow);
	// The same call n8n makes when an execution is stopped: it aborts the signal nodes and
	// httpRequest see, and ends the run after the current node.
	const cancel = () => execution.cancel();
	if (abortSignal?.aborted) cancel();
	abortSignal?.addEventListener('abort', cancel, { once: true });
	try {
		return await execution;
	} finally {
		abortSignal?.removeEventListener('abort', cancel);
	}
}
