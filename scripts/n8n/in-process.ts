/**
 * In-process n8n for node tests: runs a node class with n8n-core's real engine, so parameters,
 * credentials, HTTP, binary data, continue-on-fail, retries and cancellation behave as in n8n.
 *
 *   runNode(options): Promise<RunNodeResult>
 *     Runs the workflow "Start (Manual Trigger) -> node" with n8n-core's `WorkflowExecute`. The
 *     input items are the trigger's pinned data, as in a manual run with pinned trigger output.
 *     options: node (instance of the node class), parameters, items (default [{ json: {} }]),
 *     credentials (handed to every credential type the node declares), continueOnFail
 *     (node setting On Error: Continue), retryOnFail ({ maxTries, waitBetweenTriesMs } - n8n's
 *     own Retry On Fail, which re-runs the node with all its items within one execution),
 *     executionId (default: a fresh one per run; reuse it to simulate a re-run within one
 *     execution), abortSignal (aborting cancels the execution as the Stop button does),
 *     mode (default 'manual').
 *     Result: output (items of each output of the node; [] where it produced none), error
 *     (what the node threw, as n8n records it: a plain copy of the error's fields; also set
 *     when continueOnFail let the run go on with the input items), run (n8n's full IRun).
 *   runPoll(trigger, parameters, credentials, staticData?, mode?): Promise<RunPollResult>
 *     One poll. 'trigger' (default) goes through n8n-core's PollTriggerExecutor as an active
 *     workflow does; 'manual' runs the workflow with the trigger as start node as "Fetch Test
 *     Event" does. staticData is the workflow's static data before the poll (n8n keys a node's
 *     part 'node:<name>'); the result's staticData is a plain copy after the poll, to pass
 *     to the next call. Result: output (null = nothing to emit), staticData, error.
 *   runLoadOptions(node, method, parameters, credentials?): Promise<INodePropertyOptions[]>
 *     Calls methods.loadOptions[method] in n8n-core's LoadOptionsContext, as the editor does.
 *   runListSearch(node, method, parameters, credentials?, filter?): Promise<INodeListSearchResult>
 *     The same for methods.listSearch[method] (the list of a resource locator).
 *   binaryItem(data, fileName, mimeType, json?): Promise<INodeExecutionData>
 *     An item with binary property 'data', stored through n8n's BinaryDataService.
 *   setBinaryDataMode(mode): Promise<void>
 *     'default' (initial): binary data inline in items (base64, no id), as an n8n set to keep
 *     binary data in memory stores it. 'filesystem': stored in files with an id, as n8n 2.x stores it by default - the
 *     mode in which getBinaryStream gives a real stream. Affects binary data stored afterwards.
 *   emulatorCredentials(emulator, overrides?): credential data for the emulator's default account.
 *   registerCredentialType(type): makes a credential type known to the credentials helper
 *     (the package's own credential is registered already).
 *   getLoggedLines(): string[] / clearLoggedLines(): every line n8n or a node logged, metadata
 *     rendered in depth, so tests can assert that no secret was logged.
 *   NODE_NAME: the name of the node under test in the workflow.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';

import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import {
	BinaryDataConfig,
	BinaryDataService,
	ExecutionLifecycleHooks,
	ExternalSecretsProxy,
	LoadOptionsContext,
	PollContext,
	PollTriggerExecutor,
	WorkflowExecute,
	prepareBinaryData,
} from 'n8n-core';
import type {
	ExecutionError,
	ICredentialDataDecryptedObject,
	ICredentialType,
	IDataObject,
	IHttpRequestOptions,
	INode,
	INodeCredentials,
	INodeCredentialsDetails,
	INodeExecutionData,
	INodeParameters,
	INodeProperties,
	INodeListSearchResult,
	INodePropertyOptions,
	INodeType,
	INodeTypeDescription,
	INodeTypes,
	IRequestOptionsSimplified,
	IRun,
	ITriggerFunctions,
	ITriggerResponse,
	IWorkflowExecuteAdditionalData,
	LogMetadata,
	Logger as LoggerType,
	NodeConnectionType,
	WorkflowExecuteMode,
} from 'n8n-workflow';
import {
	createRunExecutionData,
	ICredentialsHelper,
	LoggerProxy,
	UnexpectedError,
	Workflow,
} from 'n8n-workflow';

import { ProductDataIntegrationApi } from '../../credentials/ProductDataIntegrationApi.credentials';
import { DEFAULT_ACCOUNT, type Emulator } from '../emulator';
import { applyGenericAuthentication, credentialDataOf } from './context';

export const NODE_NAME = 'Node Under Test';
const START_NAME = 'Start';
const WORKFLOW_ID = 'harness-workflow';
const PACKAGE = 'n8n-nodes-product-data-integration';
const MAIN = 'main' as NodeConnectionType;

// ---------------------------------------------------------------------------------------------
// Logging: one recorder stands in for n8n's Logger (Container) and LoggerProxy (n8n-workflow).

const loggedLines: string[] = [];

class RecordingLogger implements LoggerType {
	error(message: string, metadata?: LogMetadata) {
		this.record('error', message, metadata);
	}

	warn(message: string, metadata?: LogMetadata) {
		this.record('warn', message, metadata);
	}

	info(message: string, metadata?: LogMetadata) {
		this.record('info', message, metadata);
	}

	debug(message: string, metadata?: LogMetadata) {
		this.record('debug', message, metadata);
	}

	scoped() {
		return this;
	}

	private record(level: string, message: string, metadata?: LogMetadata) {
		// inspect rather than JSON: metadata often holds errors (with circular request objects),
		// and a secret hidden deep in one must still show up here.
		const rendered = metadata === undefined ? '' : ` ${inspect(metadata, { depth: 12, breakLength: Infinity })}`;
		loggedLines.push(`${level}: ${message}${rendered}`);
	}
}

export function getLoggedLines(): string[] {
	return [...loggedLines];
}

export function clearLoggedLines(): void {
	loggedLines.length = 0;
}

// ---------------------------------------------------------------------------------------------
// Credentials, following n8n's CLI CredentialsHelper (packages/cli/src/credentials-helper.ts).

const credentialTypes = new Map<string, ICredentialType>();

export function registerCredentialType(type: ICredentialType): void {
	credentialTypes.set(type.name, type);
}

registerCredentialType(new ProductDataIntegrationApi());

class HarnessCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly data: ICredentialDataDecryptedObject) {
		super();
	}

	getParentTypes(name: string): string[] {
		const parents = credentialTypes.get(name)?.extends ?? [];
		return parents.flatMap((parent) => [parent, ...this.getParentTypes(parent)]);
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const authenticate = this.getType(typeName).authenticate;
		if (typeof authenticate === 'function') {
			return await authenticate(credentials, requestOptions as IHttpRequestOptions);
		}
		if (authenticate?.type === 'generic') {
			if (!workflow || !node) {
				throw new UnexpectedError('Workflow and node are required for declarative credential authentication');
			}
			return applyGenericAuthentication(authenticate, credentials, requestOptions, workflow, node);
		}
		return requestOptions as IHttpRequestOptions;
	}

	// None of our credential types refreshes a token; n8n does nothing here for them either.
	async preAuthentication(): Promise<undefined> {
		return undefined;
	}

	async runPreAuthentication(): Promise<undefined> {
		return undefined;
	}

	async getCredentials(): Promise<never> {
		throw new UnexpectedError('Stored credentials are not available in the test harness');
	}

	async getDecrypted(
		_additionalData: IWorkflowExecuteAdditionalData,
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		// n8n fills in the credential type's defaults and drops fields the type does not show
		// (e.g. advanced fields hidden by displayOptions); nodes see exactly that object.
		const known = credentialTypes.get(type);
		return known ? credentialDataOf(known, this.data) : { ...this.data };
	}

	async updateCredentials(): Promise<void> {
		throw new UnexpectedError('Credentials cannot be updated in the test harness');
	}

	async updateCredentialsOauthTokenData(): Promise<void> {
		throw new UnexpectedError('Credentials cannot be updated in the test harness');
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		return this.getType(type).properties;
	}

	private getType(name: string): ICredentialType {
		const type = credentialTypes.get(name);
		if (!type) throw new UnexpectedError(`Unknown credential type "${name}": register it first`);
		return type;
	}
}

// ---------------------------------------------------------------------------------------------
// Node types: the node under test and a Manual Trigger to start the workflow from.

class ManualTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Manual Trigger',
		name: 'manualTrigger',
		group: ['trigger'],
		version: 1,
		description: 'Runs the flow on clicking a button in n8n',
		defaults: { name: START_NAME },
		inputs: [],
		outputs: [MAIN],
		properties: [],
	};

	async trigger(this: ITriggerFunctions): Promise<ITriggerResponse> {
		return { manualTriggerFunction: async () => this.emit([[{ json: {} }]]) };
	}
}

const MANUAL_TRIGGER_TYPE = 'n8n-nodes-base.manualTrigger';

class HarnessNodeTypes implements INodeTypes {
	constructor(private readonly types: Record<string, INodeType>) {}

	getByName(type: string): INodeType {
		return this.getByNameAndVersion(type);
	}

	getByNameAndVersion(type: string): INodeType {
		const nodeType = this.types[type];
		if (!nodeType) throw new UnexpectedError(`Unknown node type "${type}"`);
		return nodeType;
	}

	getKnownTypes(): IDataObject {
		return {};
	}
}

function nodeTypeName(nodeType: INodeType): string {
	return `${PACKAGE}.${nodeType.description.name}`;
}

function latestVersion(nodeType: INodeType): number {
	const { version } = nodeType.description;
	return Array.isArray(version) ? Math.max(...version) : version;
}

function nodeCredentials(nodeType: INodeType): INodeCredentials | undefined {
	const declared = nodeType.description.credentials ?? [];
	if (declared.length === 0) return undefined;
	return Object.fromEntries(declared.map(({ name }) => [name, { id: 'harness-credential', name: 'Test' }]));
}

/** The node under test as a workflow holds it, with a credential for each type it declares. */
function nodeUnderTest(nodeType: INodeType, parameters: NodeParameters): INode {
	return {
		id: randomUUID(),
		name: NODE_NAME,
		type: nodeTypeName(nodeType),
		typeVersion: latestVersion(nodeType),
		position: [200, 0],
		parameters: parameters as INodeParameters,
		credentials: nodeCredentials(nodeType),
	};
}

// ---------------------------------------------------------------------------------------------
// Process-wide n8n services, set up once per test file (jest gives each file its own modules).

let userFolder: string | undefined;
const removeUserFolder = () => {
	if (userFolder) rmSync(userFolder, { recursive: true, force: true });
};
// Jest runs many test files in one process: an exit listener per file would pile up.
if (typeof afterAll === 'function') afterAll(removeUserFolder);
else process.once('exit', removeUserFolder);

let ready: Promise<void> | undefined;

function setUp(): Promise<void> {
	ready ??= (async () => {
		// n8n reads its user folder (settings, binary data files) when the container first builds
		// InstanceSettings: a throw-away folder keeps tests away from a real ~/.n8n. Made on first
		// use, so a test file that fails to load leaves nothing behind.
		userFolder = mkdtempSync(join(tmpdir(), 'n8n-harness-'));
		process.env.N8N_USER_FOLDER = userFolder;
		const logger = new RecordingLogger();
		// n8n's Logger class has private winston internals; the recorder has its public surface.
		Container.set(Logger, logger as unknown as Logger);
		LoggerProxy.init(logger);
		Container.get(BinaryDataConfig).mode = 'default';
		await Container.get(BinaryDataService).init();
	})();
	return ready;
}

export async function setBinaryDataMode(mode: 'default' | 'filesystem'): Promise<void> {
	await setUp();
	Container.get(BinaryDataConfig).mode = mode;
	await Container.get(BinaryDataService).init();
}

function unsupported(what: string) {
	return async (): Promise<never> => {
		throw new UnexpectedError(`${what} is not available in the test harness`);
	};
}

function createAdditionalData(
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

function createWorkflow(
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
async function execute(
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
		executionData: { nodeExecutionStack: [{ node: start, data: { main: [[{ json: {} }]] }, source: null }] },
		resultData: { pinData },
	});
	const execution = new WorkflowExecute(additionalData, mode, runExecutionData).processRunExecutionData(workflow);
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

// ---------------------------------------------------------------------------------------------
// Public API

/** Node parameters as a workflow stores them; IDataObject accepted so nested options type easily. */
export type NodeParameters = INodeParameters | IDataObject;

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
	const workflow = createWorkflow([start, node], { [MANUAL_TRIGGER_TYPE]: new ManualTrigger(), [type]: nodeType });
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
		output = run.data.resultData.runData[NODE_NAME]?.at(-1)?.data?.main.map((items) => items ?? []) ?? null;
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

export async function runLoadOptions(
	nodeType: INodeType,
	method: string,
	parameters: NodeParameters,
	credentials: ICredentialDataDecryptedObject = {},
): Promise<INodePropertyOptions[]> {
	const loadOptions = nodeType.methods?.loadOptions?.[method];
	if (!loadOptions) throw new UnexpectedError(`The node has no loadOptions method "${method}"`);
	return await loadOptions.call(await loadOptionsContext(nodeType, parameters, credentials));
}

export async function runListSearch(
	nodeType: INodeType,
	method: string,
	parameters: NodeParameters,
	credentials: ICredentialDataDecryptedObject = {},
	filter?: string,
): Promise<INodeListSearchResult> {
	const listSearch = nodeType.methods?.listSearch?.[method];
	if (!listSearch) throw new UnexpectedError(`The node has no listSearch method "${method}"`);
	return await listSearch.call(await loadOptionsContext(nodeType, parameters, credentials), filter);
}

async function loadOptionsContext(
	nodeType: INodeType,
	parameters: NodeParameters,
	credentials: ICredentialDataDecryptedObject,
): Promise<LoadOptionsContext> {
	await setUp();
	// As n8n's DynamicNodeParametersService: a one-node workflow holding the parameters being
	// edited, which getCurrentNodeParameter reads through additionalData.
	const workflow = createWorkflow([nodeUnderTest(nodeType, parameters)], { [nodeTypeName(nodeType)]: nodeType });
	const additionalData = createAdditionalData(credentials, randomUUID());
	additionalData.currentNodeParameters = parameters as INodeParameters;
	return new LoadOptionsContext(workflow, workflow.getNode(NODE_NAME) as INode, additionalData, 'parameters');
}

/** Where binaryItem stores its data; n8n would use the execution that created the item. */
const FIXTURE_EXECUTION_ID = 'harness-fixtures';

export async function binaryItem(
	data: Buffer | string,
	fileName: string,
	mimeType: string,
	json: IDataObject = {},
): Promise<INodeExecutionData> {
	await setUp();
	const buffer = typeof data === 'string' ? Buffer.from(data) : data;
	const binary = await prepareBinaryData(buffer, FIXTURE_EXECUTION_ID, WORKFLOW_ID, fileName, mimeType);
	return { json, binary: { data: binary } };
}

export function emulatorCredentials(
	emulator: Pick<Emulator, 'url'>,
	overrides: ICredentialDataDecryptedObject = {},
): ICredentialDataDecryptedObject {
	return {
		environment: 'production',
		baseUrl: emulator.url,
		username: DEFAULT_ACCOUNT.username,
		password: DEFAULT_ACCOUNT.password,
		customerId: '1001',
		customerIdType: 'ServiceID',
		...overrides,
	};
}
