/**
 * Workflow JSON for the end-to-end tests: a Manual Trigger, a Code node that produces the input
 * items, then a chain of nodes (ours with the emulator credential, or any n8n node), each fed by
 * the one before it.
 *
 *   const workflow = chainWorkflow('Upload text', [{ json: { xml: '<Products/>' } }], [
 *     actionNode('Upload', { resource: 'document', operation: 'upload', source: 'text', xml: '={{ $json.xml }}' }),
 *     actionNode('Wait', { resource: 'uploadSession', operation: 'waitForCompletion', sessionIds: '={{ $json.sessionId }}' }),
 *   ]);
 */
import { CREDENTIAL_TYPE, EMULATOR_CREDENTIAL } from './credential';
import { PACKAGE_NAME } from './edition';
import type { DataTableColumnType, WorkflowDefinition } from './server';

/** The type of one of the package's nodes in a workflow, as n8n names a community node. */
export function nodeType(nodeName: string): string {
	return `${PACKAGE_NAME}.${nodeName}`;
}

/** Binary data of an input item: text (UTF-8) or raw bytes, as a Code node hands it out. */
export interface BinaryInput {
	data: string | Buffer;
	mimeType: string;
	fileName: string;
}

export interface InputItem {
	json: Record<string, unknown>;
	binary?: Record<string, BinaryInput>;
}

export interface ChainNode {
	name: string;
	type: string;
	typeVersion: number;
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
	/** n8n's node setting "On Error": 'continueRegularOutput' is "Continue" (continueOnFail). */
	onError?: 'stopWorkflow' | 'continueRegularOutput' | 'continueErrorOutput';
	/** n8n's node settings "Retry On Fail", "Max. Tries" and "Wait Between Tries (ms)". */
	retryOnFail?: boolean;
	maxTries?: number;
	waitBetweenTries?: number;
}

const TRIGGER_NAME = 'Start';
export const ITEMS_NAME = 'Items';

/** The action node of the package with the given parameters and the emulator credential. */
export function actionNode(
	name: string,
	parameters: Record<string, unknown>,
	settings: Pick<ChainNode, 'onError' | 'retryOnFail' | 'maxTries' | 'waitBetweenTries'> & {
		credential?: { id: string; name: string };
	} = {},
): ChainNode {
	const { credential = EMULATOR_CREDENTIAL, ...rest } = settings;
	return {
		name,
		type: nodeType('productDataIntegration'),
		typeVersion: 1,
		parameters,
		credentials: { [CREDENTIAL_TYPE]: { id: credential.id, name: credential.name } },
		...rest,
	};
}

/** The JavaScript of a Code node (typeVersion 2, all items at once) that returns these items. */
export function itemsCode(items: InputItem[]): string {
	const encoded = items.map(({ json, binary }) => {
		if (!binary) return { json };
		const files = Object.fromEntries(
			Object.entries(binary).map(([field, file]) => [
				field,
				{
					data: (Buffer.isBuffer(file.data) ? file.data : Buffer.from(file.data, 'utf8')).toString(
						'base64',
					),
					mimeType: file.mimeType,
					fileName: file.fileName,
				},
			]),
		);
		return { json, binary: files };
	});
	return `return ${JSON.stringify(encoded)};`;
}

function nodeId(index: number): string {
	return `5e2d0c9a-7b1f-4c3e-9d8a-${String(index).padStart(12, '0')}`;
}

/**
 * Manual Trigger -> Code node returning `items` -> each node of `chain`, in order. Every node gets
 * the whole output of the one before it.
 */
export function chainWorkflow(
	name: string,
	items: InputItem[],
	chain: ChainNode[],
): WorkflowDefinition {
	const names = [TRIGGER_NAME, ITEMS_NAME, ...chain.map((node) => node.name)];
	if (new Set(names).size !== names.length)
		throw new Error(`Node names must be unique: ${names.join(', ')}`);
	const nodes: Array<Record<string, unknown>> = [
		{
			id: nodeId(0),
			name: TRIGGER_NAME,
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [0, 0],
			parameters: {},
		},
		{
			id: nodeId(1),
			name: ITEMS_NAME,
			type: 'n8n-nodes-base.code',
			typeVersion: 2,
			position: [220, 0],
			parameters: { jsCode: itemsCode(items) },
		},
		...chain.map((node, index) => ({
			id: nodeId(index + 2),
			position: [440 + 220 * index, 0],
			...node,
		})),
	];
	const connections: Record<string, unknown> = {};
	for (let index = 0; index < names.length - 1; index++) {
		connections[names[index]] = { main: [[{ node: names[index + 1], type: 'main', index: 0 }]] };
	}
	return { name, nodes, connections, settings: { executionOrder: 'v1' } };
}

/**
 * An HTTP Request node that downloads a file into the binary field `data`. Unlike the Code node's
 * inline data, n8n keeps a download in its binary data store (the file system by default), the
 * way files read from disk or fetched from a shop arrive in real workflows.
 */
export function downloadNode(name: string, url: string): ChainNode {
	return {
		name,
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		parameters: {
			url,
			options: { response: { response: { responseFormat: 'file', outputPropertyName: 'data' } } },
		},
	};
}

/**
 * The data tables a workflow adds rows to, with their columns as its Data Table nodes that insert
 * or upsert rows describe them: what a user creates before running the workflow. One entry per such
 * node: a table two nodes fill comes twice.
 */
export function dataTablesFilled(
	workflow: WorkflowDefinition,
): Array<{ name: string; columns: Array<{ name: string; type: DataTableColumnType }> }> {
	return (workflow.nodes as Array<{ type: string; parameters: Record<string, unknown> }>)
		.filter(
			({ type, parameters }) =>
				type === 'n8n-nodes-base.dataTable' &&
				['insert', 'upsert'].includes(String(parameters.operation)),
		)
		.map(({ parameters }) => {
			const { value: name } = parameters.dataTableId as { value: string };
			const { schema } = parameters.columns as {
				schema: Array<{ id: string; type: DataTableColumnType }>;
			};
			return { name, columns: schema.map(({ id, type }) => ({ name: id, type })) };
		});
}
