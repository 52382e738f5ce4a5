// A node's `this` without running a workflow: n8n-core's own ExecuteContext and PollContext, for
// calling the package's parts (the transport, an operation's steps) directly.
import { randomUUID } from 'node:crypto';

import { ExecuteContext, PollContext } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	INode,
	INodeExecutionData,
	INodeType,
	IPollFunctions,
	Logger,
} from 'n8n-workflow';
import { createRunExecutionData } from 'n8n-workflow';

// '.node.js' because tsx would resolve '.node' to the codex file next to it (.node.json).
import { ProductDataIntegration } from '../../../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { ProductDataIntegrationTrigger } from '../../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node.js';
import { createAdditionalData, createWorkflow } from './execute';
import { NODE_NAME, nodeTypeName, nodeUnderTest } from './nodeTypes';
import { setUpSettings } from './services';

export interface ContextOptions {
	credentials: ICredentialDataDecryptedObject;
	/** The node's parameters, as a workflow stores them (n8n adds the defaults). */
	nodeParameters?: IDataObject;
	/** What getInputData returns (default one empty item). */
	items?: INodeExecutionData[];
	/** The node setting "On Error: Continue (using regular output)". */
	continueOnFail?: boolean;
	/** The execution's cancel signal (getExecutionCancelSignal). */
	signal?: AbortSignal;
}

/** A node's context; `logged` holds every line it logged, as `level message {metadata as JSON}`. */
export type TestContext = IExecuteFunctions & { logged: string[] };

/**
 * A logger of one context, so a test reads what that context logged. The lines of n8n-core itself
 * go to the process's recorder (getLoggedLines).
 */
function recordInto(logged: string[]): Logger {
	const record = (level: string) => (message: string, metadata?: object) => {
		logged.push(`${level} ${message}${metadata ? ` ${JSON.stringify(metadata)}` : ''}`);
	};
	const logger = {
		error: record('error'),
		warn: record('warn'),
		info: record('info'),
		debug: record('debug'),
		scoped: () => logger,
	};
	return logger as unknown as Logger;
}

function withLog<T extends object>(context: T): T & { logged: string[] } {
	const logged: string[] = [];
	Object.defineProperty(context, 'logger', { value: recordInto(logged) });
	return Object.assign(context, { logged });
}

function nodeOf(
	nodeType: INodeType,
	options: ContextOptions,
): { node: INode; workflow: ReturnType<typeof createWorkflow> } {
	setUpSettings();
	const declared: INode = {
		...nodeUnderTest(nodeType, options.nodeParameters ?? {}),
		// The contexts of a test are runs (or polls) of one node of one workflow.
		id: 'context-node',
		onError: options.continueOnFail ? 'continueRegularOutput' : 'stopWorkflow',
	};
	const workflow = createWorkflow([declared], { [nodeTypeName(nodeType)]: nodeType });
	return { node: workflow.getNode(NODE_NAME) as INode, workflow };
}

/** The `this` of the action node's execute(): n8n-core's ExecuteContext, in a run of its own. */
export function createContext(options: ContextOptions): TestContext {
	const { node, workflow } = nodeOf(new ProductDataIntegration(), options);
	const items = options.items ?? [{ json: {} }];
	const context = new ExecuteContext(
		workflow,
		node,
		createAdditionalData(options.credentials, randomUUID()),
		'manual',
		createRunExecutionData(),
		0,
		items,
		{ main: [items] },
		{ node, data: { main: [items] }, source: null },
		[],
		options.signal,
	);
	return withLog(context) as unknown as TestContext;
}

/**
 * The `this` of the trigger's poll: n8n-core's PollContext of an active workflow, which n8n keeps
 * across the polls of a trigger; it has no execution cancel signal (a poll's deadline stands in for
 * it), and what it emits goes nowhere.
 */
export function createPollContext(
	options: Omit<ContextOptions, 'signal'>,
): TestContext & IPollFunctions {
	const { node, workflow } = nodeOf(new ProductDataIntegrationTrigger(), options);
	const context = new PollContext(
		workflow,
		node,
		createAdditionalData(options.credentials, randomUUID()),
		'trigger',
		'activate',
		() => undefined,
	);
	return withLog(context) as unknown as TestContext & IPollFunctions;
}
