// The node under test and a Manual Trigger to start the workflow from, as n8n's node types know them.
import { randomUUID } from 'node:crypto';

import { commonPollingParameters } from 'n8n-core/dist/nodes-loader/constants';
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
/** A node type as n8n's loader hands it out: a polling node gains Poll Times (DirectoryLoader.applySpecialNodeParameters). */
function asLoaded(nodeType: INodeType): INodeType {
	const { description } = nodeType;
	if (!description.polling) return nodeType;
	const properties = [...commonPollingParameters, ...description.properties];
	return Object.create(nodeType, {
		description: { value: { ...description, properties } },
	}) as INodeType;
}

export class HarnessNodeTypes implements INodeTypes {
	private readonly types: Record<string, INodeType>;

	constructor(types: Record<string, INodeType>) {
		this.types = Object.fromEntries(
			Object.entries(types).map(([name, nodeType]) => [name, asLoaded(nodeType)]),
		);
	}

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
	return Object.fromEntries(
		declared.map(({ name }) => [name, { id: 'harness-credential', name: 'Test' }]),
	);
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
