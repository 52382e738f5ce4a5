// The node under test and a Manual Trigger to start the workflow from, as n8n's node types know them.
import { randomUUID } from 'node:crypto';

import type {
	IDataObject,
	INode,
	INodeCredentials,
	INodeParameters,
	INodeType,
	INodeTypeDescription,
	INodeTypes,
	ITriggerFunctions,
	ITriggerResponse,
	NodeConnectionType,
} from 'n8n-workflow';
import { UnexpectedError } from 'n8n-workflow';

export const NODE_NAME = 'Node Under Test';
export const START_NAME = 'Start';
export const MANUAL_TRIGGER_TYPE = 'n8n-nodes-base.manualTrigger';
export const MAIN = 'main' as NodeConnectionType;
const PACKAGE = 'n8n-nodes-product-data-integration';

/** Node parameters as a workflow stores them; IDataObject accepted so nested options type easily. */
export type NodeParameters = INodeParameters | IDataObject;

export class ManualTrigger implements INodeType {
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
export class HarnessNodeTypes implements INodeTypes {
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

export function nodeTypeName(nodeType: INodeType): string {
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
export function nodeUnderTest(nodeType: INodeType, parameters: NodeParameters): INode {
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
