// What the editor asks of a node: the options of a list and the list of a resource locator.
import { randomUUID } from 'node:crypto';

import { LoadOptionsContext } from 'n8n-core';
import type {
	ICredentialDataDecryptedObject,
	INode,
	INodeListSearchResult,
	INodeParameters,
	INodePropertyOptions,
	INodeType,
} from 'n8n-workflow';
import { UnexpectedError } from 'n8n-workflow';

import { createAdditionalData, createWorkflow } from './execute';
import { NODE_NAME, type NodeParameters, nodeTypeName, nodeUnderTest } from './nodeTypes';
import { setUp } from './services';

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
	const workflow = createWorkflow([nodeUnderTest(nodeType, parameters)], {
		[nodeTypeName(nodeType)]: nodeType,
	});
	const additionalData = createAdditionalData(credentials, randomUUID());
	additionalData.currentNodeParameters = parameters as INodeParameters;
	return new LoadOptionsContext(
		workflow,
		workflow.getNode(NODE_NAME) as INode,
		additionalData,
		'parameters',
	);
}
