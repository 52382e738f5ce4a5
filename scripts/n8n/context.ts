/**
 * A small stand-in for the `this` of a node's execute(), enough to call the transport
 * (serviceRequest / fetchServiceUrl) and simple operation code directly, without a workflow.
 *
 * The HTTP part is n8n's own: `helpers.httpRequest` and `helpers.httpRequestWithAuthentication`
 * are n8n-core's request helpers, and the credential's declarative `authenticate` is applied the
 * way n8n's CredentialsHelper does (expressions resolved by n8n's expression engine). Credential
 * data goes through n8n's parameter resolution, so fields hidden by displayOptions disappear as
 * they do in n8n.
 *
 *   createContext({ credentials, nodeParameters?, items?, continueOnFail?, signal? })
 *     credentials: data of the productDataIntegrationApi credential.
 *     nodeParameters: values getNodeParameter hands out (dotted paths such as 'options.x' work).
 *     items: what getInputData returns (default [{ json: {} }]).
 *     signal: the execution's cancel signal (getExecutionCancelSignal).
 *   The result is usable as IExecuteFunctions; `logged` holds every line logged through
 *   `this.logger` (with its metadata as JSON), so tests can check that no secret is logged.
 *   createPollContext({ credentials, ... }) is the same as a trigger's poll has it (IPollFunctions).
 */
import {
	constructExecutionMetaData,
	normalizeItems,
	returnJsonArray,
} from 'n8n-core';
import { getRequestHelperFunctions } from 'n8n-core/dist/execution-engine/node-execution-context/utils/request-helpers/factory';
import {
	isExpression,
	NodeHelpers,
	Workflow,
	type IAuthenticateGeneric,
	type ICredentialDataDecryptedObject,
	type ICredentialsHelper,
	type ICredentialType,
	type IDataObject,
	type IExecuteFunctions,
	type IPollFunctions,
	type IHttpRequestOptions,
	type INode,
	type INodeExecutionData,
	type INodeParameters,
	type INodeTypes,
	type IRequestOptionsSimplified,
	type IWorkflowExecuteAdditionalData,
	type Logger,
} from 'n8n-workflow';

import { ProductDataIntegrationApi } from '../../credentials/ProductDataIntegrationApi.credentials';

export interface ContextOptions {
	credentials: ICredentialDataDecryptedObject;
	nodeParameters?: IDataObject;
	items?: INodeExecutionData[];
	continueOnFail?: boolean;
	signal?: AbortSignal;
}

export type TestContext = IExecuteFunctions & { logged: string[] };

const credentialType = new ProductDataIntegrationApi();

const NODE: INode = {
	id: 'context-node',
	name: 'Product Data Integration',
	type: 'n8n-nodes-product-data-integration.productDataIntegration',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
	credentials: { [credentialType.name]: { id: 'context-credential', name: 'Test' } },
};

const nodeTypes: INodeTypes = {
	getByName: () => ({ description: { properties: [] } }) as never,
	getByNameAndVersion: () => ({ description: { properties: [] } }) as never,
	getKnownTypes: () => ({}),
};

/** What n8n hands a node from getCredentials: the type's defaults applied, hidden fields dropped. */
export function credentialDataOf(type: ICredentialType, data: ICredentialDataDecryptedObject): ICredentialDataDecryptedObject {
	return NodeHelpers.getNodeParameters(
		type.properties,
		{ ...data } as INodeParameters,
		true,
		false,
		null,
		null,
	) as ICredentialDataDecryptedObject;
}

/** credentialDataOf for the package's own credential. */
export function resolveCredentialData(data: ICredentialDataDecryptedObject): ICredentialDataDecryptedObject {
	return credentialDataOf(credentialType, data);
}

function resolveWith(
	workflow: Workflow,
	node: INode,
	credentials: ICredentialDataDecryptedObject,
	text: string,
): string {
	if (!isExpression(text)) return text;
	const value = workflow.expression.getSimpleParameterValue(node, text, 'internal', { $credentials: credentials }, undefined, '');
	return value ? String(value) : '';
}

/**
 * n8n's CredentialsHelper.authenticate for a declarative (generic) credential: each key and value
 * resolved with the expression engine and written into the request option of the same name
 * (headers, auth, qs, body).
 */
export function applyGenericAuthentication(
	authenticate: IAuthenticateGeneric,
	credentials: ICredentialDataDecryptedObject,
	requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
	workflow: Workflow,
	node: INode,
): IHttpRequestOptions {
	const resolve = (text: string) => resolveWith(workflow, node, credentials, text);
	requestOptions.headers ??= {};
	const target = requestOptions as unknown as Record<string, Record<string, string>>;
	for (const [option, entries] of Object.entries(authenticate.properties)) {
		for (const [key, value] of Object.entries(entries as Record<string, string>)) {
			target[option] ??= {};
			target[option][resolve(key)] = resolve(value);
		}
	}
	return requestOptions as IHttpRequestOptions;
}

async function authenticate(
	credentials: ICredentialDataDecryptedObject,
	typeName: string,
	requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
	workflow: Workflow,
	node: INode,
): Promise<IHttpRequestOptions> {
	if (typeName !== credentialType.name) throw new Error(`Unknown credential type ${typeName}`);
	return applyGenericAuthentication(credentialType.authenticate, credentials, requestOptions, workflow, node);
}

/** Resolves an expression of the credential type (e.g. its test request) as n8n does. */
export function resolveCredentialExpression(text: string, credentials: ICredentialDataDecryptedObject): string {
	const workflow = new Workflow({ nodes: [NODE], connections: {}, active: false, nodeTypes });
	return resolveWith(workflow, NODE, credentials, text);
}

/** Applies the credential's `authenticate` to request options as n8n does before sending. */
export async function authenticateRequest(
	credentials: ICredentialDataDecryptedObject,
	requestOptions: IHttpRequestOptions,
): Promise<IHttpRequestOptions> {
	const workflow = new Workflow({ nodes: [NODE], connections: {}, active: false, nodeTypes });
	return await authenticate(credentials, credentialType.name, requestOptions, workflow, NODE);
}

function pathValue(source: IDataObject, path: string): unknown {
	let current: unknown = source;
	for (const part of path.split('.')) {
		if (typeof current !== 'object' || current === null) return undefined;
		current = (current as IDataObject)[part];
	}
	return current;
}

export function createContext(options: ContextOptions): TestContext {
	const logged: string[] = [];
	const record = (level: string) => (message: string, meta?: object) => {
		logged.push(`${level} ${message}${meta ? ` ${JSON.stringify(meta)}` : ''}`);
	};
	const logger = {
		error: record('error'),
		warn: record('warn'),
		info: record('info'),
		debug: record('debug'),
		scoped: () => logger,
	} as unknown as Logger;

	const workflow = new Workflow({ nodes: [NODE], connections: {}, active: false, nodeTypes });
	const credentialsHelper = {
		getParentTypes: () => [],
		preAuthentication: async () => undefined,
		authenticate,
	} as unknown as ICredentialsHelper;
	const additionalData = { credentialsHelper } as unknown as IWorkflowExecuteAdditionalData;
	const items = options.items ?? [{ json: {} }];
	const parameters = options.nodeParameters ?? {};

	const context = {
		logged,
		logger,
		getNode: () => NODE,
		getCredentials: async (type: string) => {
			if (type !== credentialType.name) throw new Error(`Node does not have credentials of type ${type}`);
			return resolveCredentialData(options.credentials);
		},
		getNodeParameter: (name: string, _itemIndex?: number, fallback?: unknown) => {
			const value = pathValue(parameters, name);
			if (value !== undefined) return value;
			if (fallback !== undefined) return fallback;
			throw new Error(`Could not get parameter "${name}"`);
		},
		getInputData: () => items,
		continueOnFail: () => options.continueOnFail ?? false,
		getExecutionCancelSignal: () => options.signal,
		getExecutionId: () => 'context-execution',
		getMode: () => 'manual',
		helpers: {
			...getRequestHelperFunctions(workflow, NODE, additionalData),
			returnJsonArray,
			constructExecutionMetaData,
			normalizeItems,
		},
	};
	return context as unknown as TestContext;
}

/**
 * The `this` of a trigger's poll: n8n keeps one for as long as the trigger is active, across its
 * polls, and it has no execution cancel signal (a poll's deadline stands in for it).
 */
export function createPollContext(options: Omit<ContextOptions, 'signal'>): TestContext & IPollFunctions {
	const context = createContext(options) as unknown as Record<string, unknown>;
	delete context.getExecutionCancelSignal;
	context.__emit = () => undefined;
	context.getMode = () => 'trigger';
	return context as unknown as TestContext & IPollFunctions;
}
