/**
 * The workflows of bench:pages-n8n (pages-n8n.ts): the page workflow each night's pages run, in
 * its three ways of sending (collected into full documents, each page its own upload with the
 * memory in Redis, each page its own upload with the memory kept by the workflow in a Data Table),
 * and the night's last step when collecting.
 */
import { CREDENTIAL_TYPE } from '../scripts/n8n/credential';
import type { WorkflowDefinition } from '../scripts/n8n/server';

export type Send = 'collected' | 'withEachRun' | 'workflow';
/**
 * How the page workflow writes back the versions Upload handed back: `byRow` inserts the new ones
 * in one bulk insert and updates each changed one by its row id (the nightly-sync example's way for
 * photos); `rewrite` deletes the page's rows and inserts every version the page knows in one bulk
 * insert, when anything changed.
 */
export type TableWrite = 'byRow' | 'rewrite';
export type Credential = { id: string; name: string };

export const PAGE_WORKFLOW_ID = 'benchPageSync01';
export const SEND_COLLECTED_WORKFLOW_ID = 'benchSendRest01';
export const PAGE_PATH = 'page-sync';
export const SEND_COLLECTED_PATH = 'send-collected';
export const KNOWN_VERSIONS_TABLE = 'Bench Known Versions';
const MEMORY_NAME = 'bench-pages';

export interface PageWorkflowOptions {
	shopUrl: string;
	credential: Credential;
	send: Send;
	perDocument: number;
	tableWrite: TableWrite;
}

/** A Webhook at `path` that answers with the first item of the workflow's last node. */
function webhookNode(path: string) {
	return {
		id: `webhook-${path}`,
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: `${path}-webhook`,
		parameters: {
			httpMethod: 'POST',
			path,
			responseMode: 'lastNode',
			responseData: 'firstEntryJson',
			options: {},
		},
	};
}

function codeNode(name: string, position: [number, number], jsCode: string, always = false) {
	return {
		id: name.toLowerCase().replaceAll(' ', '-'),
		name,
		type: 'n8n-nodes-base.code',
		typeVersion: 2,
		position,
		parameters: { jsCode },
		...(always && { alwaysOutputData: true }),
	};
}

/** The page's range of product ids (the shop's sort as strings): what a row get or delete matches. */
const PAGE_RANGE = {
	matchType: 'allConditions',
	filters: {
		conditions: [
			{
				keyName: 'productId',
				condition: 'gte',
				keyValue: "={{ $('Shop').all().map((product) => product.json.sku).sort().at(0) }}",
			},
			{
				keyName: 'productId',
				condition: 'lte',
				keyValue: "={{ $('Shop').all().map((product) => product.json.sku).sort().at(-1) }}",
			},
		],
	},
};

const TABLE_SCHEMA = ['productId', 'version'].map((id) => ({
	id,
	displayName: id,
	required: false,
	defaultMatch: false,
	display: true,
	type: 'string',
	readOnly: false,
	removed: false,
}));

/** A Data Table node on the known versions' table. */
function tableNode(
	name: string,
	position: [number, number],
	parameters: Record<string, unknown>,
	settings: Record<string, unknown> = {},
) {
	return {
		id: name.toLowerCase().replaceAll(' ', '-'),
		name,
		type: 'n8n-nodes-base.dataTable',
		typeVersion: 1.1,
		position,
		parameters: {
			resource: 'row',
			dataTableId: { __rl: true, mode: 'name', value: KNOWN_VERSIONS_TABLE },
			...parameters,
		},
		...settings,
	};
}

/**
 * Inserts its input items, each a productId and a version, in one bulk insert. Mapped
 * automatically: columns defined by expressions cost n8n an evaluation of each per row, in one
 * synchronous loop over the items before the insert (about 1 ms a row, one block of the main's
 * event loop).
 */
function insertNode(name: string, position: [number, number]) {
	return tableNode(name, position, {
		operation: 'insert',
		columns: {
			mappingMode: 'autoMapInputData',
			value: {},
			matchingColumns: [],
			schema: TABLE_SCHEMA,
			attemptToConvertTypes: false,
			convertFieldsToString: false,
		},
		options: { optimizeBulk: true },
	});
}

// The versions Upload handed back, by product, beside the rows the page read before it.
const HANDED_BACK = `const known = new Map(
  $('Known Versions').all().filter((row) => typeof row.json.productId === 'string').map((row) => [row.json.productId, row.json]),
);
const handedBack = $('Upload').all().filter((item) => typeof item.json.version === 'string');`;

/** The nodes after Upload that keep what it handed back, in the table, as `write` does it. */
function writeNodes(write: TableWrite): { nodes: unknown[]; connections: Links } {
	if (write === 'byRow')
		return {
			nodes: [
				codeNode(
					'New Versions',
					[1100, -300],
					`${HANDED_BACK}
return handedBack
  .filter((item) => !known.has(item.json.product))
  .map((item) => ({ json: { productId: item.json.product, version: item.json.version } }));`,
				),
				insertNode('Remember New Versions', [1320, -300]),
				codeNode(
					'Changed Versions',
					[1100, -100],
					`${HANDED_BACK}
return handedBack
  .filter((item) => known.has(item.json.product) && known.get(item.json.product).version !== item.json.version)
  .map((item) => ({ json: { rowId: known.get(item.json.product).id, version: item.json.version } }));`,
				),
				tableNode('Remember Changed Versions', [1320, -100], {
					operation: 'update',
					matchType: 'allConditions',
					filters: {
						conditions: [{ keyName: 'id', condition: 'eq', keyValue: '={{ $json.rowId }}' }],
					},
					columns: {
						mappingMode: 'defineBelow',
						value: { version: '={{ $json.version }}' },
						matchingColumns: [],
						schema: TABLE_SCHEMA,
						attemptToConvertTypes: false,
						convertFieldsToString: false,
					},
					options: {},
				}),
			],
			connections: {
				Upload: [{ node: 'New Versions' }, { node: 'Changed Versions' }],
				'New Versions': [{ node: 'Remember New Versions' }],
				'Changed Versions': [{ node: 'Remember Changed Versions' }],
			},
		};
	return {
		nodes: [
			codeNode(
				'Page Versions',
				[1100, -200],
				`// Every version the page knows after the run, or nothing when none changed: handed back, or
// the known one of a product Upload left out as unchanged. A product sent but not confirmed gets
// no row, so the next night sends it again.
${HANDED_BACK}
if (handedBack.every((item) => known.get(item.json.product)?.version === item.json.version)) return [];
const versionOf = new Map(handedBack.map((item) => [item.json.product, item.json.version]));
const output = new Set($('Upload').all().map((item) => item.json.product));
return $('Shop').all().flatMap(({ json: { sku } }) => {
  const version = versionOf.get(sku) ?? (output.has(sku) ? undefined : known.get(sku)?.version);
  return version === undefined ? [] : [{ json: { productId: sku, version } }];
});`,
			),
			tableNode(
				'Forget Page Versions',
				[1320, -200],
				{ operation: 'deleteRows', ...PAGE_RANGE, options: {} },
				{ executeOnce: true, alwaysOutputData: true },
			),
			codeNode(
				'Page Versions Again',
				[1540, -200],
				"return $('Page Versions').all().map(({ json }) => ({ json }));",
			),
			insertNode('Remember Page Versions', [1760, -200]),
		],
		connections: {
			Upload: [{ node: 'Page Versions' }],
			'Page Versions': [{ node: 'Forget Page Versions' }],
			'Forget Page Versions': [{ node: 'Page Versions Again' }],
			'Page Versions Again': [{ node: 'Remember Page Versions' }],
		},
	};
}

function uploadNode(credential: Credential, sending: Record<string, unknown>) {
	return {
		id: 'upload',
		name: 'Upload',
		type: 'n8n-nodes-product-data-integration.productDataIntegration',
		typeVersion: 1,
		position: [880, 0],
		parameters: {
			resource: 'document',
			operation: 'upload',
			source: 'items',
			rootElement: 'Products',
			itemElement: 'Product',
			onlyChangedProducts: true,
			productField: 'sku',
			productsInEachRun: 'partOfCatalogue',
			...sending,
			outputUnchangedProducts: false,
		},
		credentials: { [CREDENTIAL_TYPE]: credential },
	};
}

type Links = Record<string, Array<{ node: string }>>;

function connectionsOf(links: Links) {
	return Object.fromEntries(
		Object.entries(links).map(([from, targets]) => [
			from,
			{ main: [targets.map(({ node }) => ({ node, type: 'main', index: 0 }))] },
		]),
	);
}

/**
 * Webhook (the page number) -> Shop (HTTP Request, that page) -> Upload. With the memory kept by
 * the workflow, Known Versions (the page's rows of the table, read once) and With Known Versions
 * (each product with its known version) come before Upload, the nodes of `tableWrite` after it,
 * and Page Result (the lowest branch, so the last to run and the webhook's answer) gives Upload's
 * summary.
 */
export function pageWorkflow({
	shopUrl,
	credential,
	send,
	perDocument,
	tableWrite,
}: PageWorkflowOptions): WorkflowDefinition & { id: string } {
	const shop = {
		id: 'shop',
		name: 'Shop',
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		position: [220, 0],
		parameters: { url: `={{ '${shopUrl}/?page=' + $json.body.page }}` },
	};
	if (send !== 'workflow') {
		const sending =
			send === 'collected'
				? {
						sendChangedProducts: 'collected',
						memoryName: MEMORY_NAME,
						productsPerDocument: perDocument,
					}
				: { sendChangedProducts: 'withEachRun' };
		return {
			id: PAGE_WORKFLOW_ID,
			name: 'Page sync',
			settings: { executionOrder: 'v1' },
			nodes: [webhookNode(PAGE_PATH), shop, uploadNode(credential, sending)],
			connections: connectionsOf({ Webhook: [{ node: 'Shop' }], Shop: [{ node: 'Upload' }] }),
		};
	}
	const write = writeNodes(tableWrite);
	return {
		id: PAGE_WORKFLOW_ID,
		name: 'Page sync',
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(PAGE_PATH),
			shop,
			tableNode(
				'Known Versions',
				[440, 0],
				{ operation: 'get', ...PAGE_RANGE, returnAll: true },
				{ executeOnce: true, alwaysOutputData: true },
			),
			codeNode(
				'With Known Versions',
				[660, 0],
				`const known = new Map(
  $input.all().filter((row) => typeof row.json.productId === 'string').map((row) => [row.json.productId, row.json.version]),
);
return $('Shop').all().map(({ json }) => ({ json: { ...json, knownVersion: known.get(json.sku) ?? '' } }));`,
			),
			uploadNode(credential, { memoryKeptIn: 'workflow', knownVersionField: 'knownVersion' }),
			...write.nodes,
			codeNode(
				'Page Result',
				[1100, 300],
				"return [{ json: { run: $('Upload').first().json.run } }];",
			),
		],
		connections: connectionsOf({
			Webhook: [{ node: 'Shop' }],
			Shop: [{ node: 'Known Versions' }],
			'Known Versions': [{ node: 'With Known Versions' }],
			'With Known Versions': [{ node: 'Upload' }],
			...write.connections,
			Upload: [...(write.connections.Upload ?? []), { node: 'Page Result' }],
		}),
	};
}

/** The night's last step: Send Collected Products sends what the pages left collected. */
export function sendCollectedWorkflow(
	credential: Credential,
	perDocument: number,
): WorkflowDefinition & { id: string } {
	return {
		id: SEND_COLLECTED_WORKFLOW_ID,
		name: 'Send collected products',
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(SEND_COLLECTED_PATH),
			{
				id: 'send-collected',
				name: 'Send Collected',
				type: 'n8n-nodes-product-data-integration.productDataIntegration',
				typeVersion: 1,
				position: [220, 0],
				parameters: {
					resource: 'document',
					operation: 'sendCollected',
					memoryName: MEMORY_NAME,
					productsPerDocument: perDocument,
					options: {},
				},
				credentials: { [CREDENTIAL_TYPE]: credential },
			},
		],
		connections: connectionsOf({ Webhook: [{ node: 'Send Collected' }] }),
	};
}
