import type { IDisplayOptions, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

/** The fields of Only Changed Products, shown with every XML source. */
export const changedProductsFields: INodeProperties[] = [
	{
		displayName: 'Only Changed Products',
		name: 'onlyChangedProducts',
		type: 'boolean',
		default: false,
		description:
			'Whether to leave out every product whose content the service has confirmed (its session finished without errors). Waits for completion itself. A run remembers only its own products: a manual test run with a few sample items makes the next run send all the others again (Validate Only changes nothing). Only for formats in which a document is a set of product updates, never for one that replaces the whole catalogue.',
	},
	{
		displayName: 'Product Field',
		name: 'productField',
		type: 'string',
		default: 'sku',
		required: true,
		description:
			'The field of each input item that identifies its product, e.g. sku. Each product may come once per run.',
		displayOptions: { show: { onlyChangedProducts: [true] } },
	},
	{
		displayName: 'Products in Each Run',
		name: 'productsInEachRun',
		type: 'options',
		options: [
			{
				name: 'The Whole Catalogue',
				value: 'wholeCatalogue',
				description:
					"Each run holds every product (up to 250,000), remembered in n8n's own store; a product a run does not hold is forgotten",
			},
			{
				name: 'Part of the Catalogue',
				value: 'partOfCatalogue',
				description:
					"Each run holds some products (a page of a shop, a delta feed's run), runs may go on side by side; each product is remembered on its own in the account's Redis (queue mode, or Rate Limit Sharing set to Redis)",
			},
		],
		default: 'wholeCatalogue',
		description: 'Whether each run of this node holds the whole catalogue or part of it',
		displayOptions: { show: { onlyChangedProducts: [true] } },
	},
	{
		displayName: 'Memory Kept In',
		name: 'memoryKeptIn',
		type: 'options',
		options: [
			{
				name: "The Account's Redis",
				value: 'redis',
				description:
					"Each product is remembered in the account's Redis (queue mode, or Rate Limit Sharing set to Redis): runs side by side are kept apart, changed products can be collected into full documents and missing products counted",
			},
			{
				name: 'The Workflow',
				value: 'workflow',
				description:
					'Each item brings the version this node gave its product when the service last confirmed it, and the workflow keeps the versions the output hands back (e.g. in a Data Table): no Redis needed, as on n8n Cloud',
			},
		],
		default: 'redis',
		description: 'Where what the service confirmed of each product is kept',
		displayOptions: {
			show: { onlyChangedProducts: [true], productsInEachRun: ['partOfCatalogue'] },
		},
	},
	{
		displayName: 'Known Version Field',
		name: 'knownVersionField',
		type: 'string',
		default: 'knownVersion',
		required: true,
		description:
			"The field of each input item holding the version this node output for its product when the service last confirmed it (empty or missing for a product never confirmed): a product whose version still fits is not sent. The field is left out of the product's XML and content.",
		displayOptions: {
			show: {
				onlyChangedProducts: [true],
				productsInEachRun: ['partOfCatalogue'],
				memoryKeptIn: ['workflow'],
			},
		},
	},
	{
		displayName: 'Send Changed Products',
		name: 'sendChangedProducts',
		type: 'options',
		options: [
			{
				name: 'With Each Run',
				value: 'withEachRun',
				description:
					'Each run sends its own changed products: one upload per run that holds a change',
			},
			{
				name: 'Collected Into Full Documents',
				value: 'collected',
				description:
					'The changed products of every run naming the memory are collected in Redis; a run that fills a document sends it, and the Send Collected Products operation sends the rest once the last run has ended',
			},
		],
		default: 'withEachRun',
		description:
			'Whether each run sends its changed products itself or collects them with those of other runs, so that a night of many pages costs one upload per full document',
		displayOptions: {
			show: {
				onlyChangedProducts: [true],
				productsInEachRun: ['partOfCatalogue'],
				memoryKeptIn: ['redis'],
				source: ['items'],
			},
		},
	},
	{
		displayName: 'Memory Name',
		name: 'memoryName',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. shop-catalogue',
		description:
			'Names the memory and the collection of these products: every node naming it with the same credential password shares them, and Send Collected Products names it to send the rest',
		displayOptions: {
			show: {
				onlyChangedProducts: [true],
				productsInEachRun: ['partOfCatalogue'],
				memoryKeptIn: ['redis'],
				source: ['items'],
				sendChangedProducts: ['collected'],
			},
		},
	},
	productsPerDocumentField({
		onlyChangedProducts: [true],
		productsInEachRun: ['partOfCatalogue'],
		memoryKeptIn: ['redis'],
		source: ['items'],
		sendChangedProducts: ['collected'],
	}),
	{
		displayName: 'Validate Only',
		name: 'validateOnly',
		type: 'boolean',
		default: false,
		description:
			'Whether to run every check and consult the memory but send nothing and leave the memory as it is: outputs what a real run would send, the requests it would spend and how long the rate limit would take',
		displayOptions: { show: { onlyChangedProducts: [true] } },
	},
	{
		displayName: 'Send All Products',
		name: 'sendAllProducts',
		type: 'boolean',
		default: false,
		description:
			'Whether to forget what the service confirmed and send every product in this run (then remember again what it confirms)',
		displayOptions: { show: { onlyChangedProducts: [true] } },
	},
	{
		displayName: 'Count Missing Products',
		name: 'countMissingProducts',
		type: 'boolean',
		default: false,
		description:
			"Whether the run's summary counts the products the last run remembered that this run does not have (missing). Keeps a second value per product in the memory: twice its size and up to three times the time n8n's store takes each run.",
		displayOptions: {
			show: { onlyChangedProducts: [true], productsInEachRun: ['wholeCatalogue'] },
		},
	},
	{
		displayName: 'Output Unchanged Products',
		name: 'outputUnchangedProducts',
		type: 'boolean',
		default: true,
		description:
			"Whether a product that was not sent because it is unchanged gets an output item. Off, only the products sent (or that would be, with Validate Only) and the invalid ones come out, and a run with none of them outputs one item with the run's summary: n8n keeps every output item in the execution's data, so on a night where little changed this keeps it small.",
		displayOptions: { show: { onlyChangedProducts: [true] } },
	},
];

/** Products per document of a collection, shown where `show` holds. */
export function productsPerDocumentField(show: IDisplayOptions['show']): INodeProperties {
	return {
		displayName: 'Products per Document',
		name: 'productsPerDocument',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 10_000,
		description:
			'How many collected products go into one document: each document costs one upload and one status read',
		displayOptions: { show },
	};
}

/** Collected Into Full Documents: the collection the run's changed products join. */
export interface CollectSettings {
	memoryName: string;
	productsPerDocument: number;
}

export interface ChangedProductsSettings {
	productField: string;
	/** Each run holds part of the catalogue: the memory per product (see partMemory.ts). */
	partOfCatalogue: boolean;
	/** Set when the changed products of a part are collected with other runs' (see collectedRun.ts). */
	collect?: CollectSettings;
	/** Set when the workflow keeps the memory: the field of each item with its known version. */
	knownVersionField?: string;
	validateOnly: boolean;
	sendAll: boolean;
	countMissing: boolean;
	outputUnchanged: boolean;
}

/** The settings of Only Changed Products, or undefined when it is off. */
export function changedProductsSettings(
	context: IExecuteFunctions,
): ChangedProductsSettings | undefined {
	if (context.getNodeParameter('onlyChangedProducts', 0, false) !== true) return undefined;
	const productField = fieldName(
		context,
		'productField',
		'Product Field',
		'identifies its product, e.g. sku',
	);
	const partOfCatalogue =
		context.getNodeParameter('productsInEachRun', 0, 'wholeCatalogue') === 'partOfCatalogue';
	const knownVersionField =
		partOfCatalogue && context.getNodeParameter('memoryKeptIn', 0, 'redis') === 'workflow'
			? fieldName(
					context,
					'knownVersionField',
					'Known Version Field',
					"holds its product's known version, e.g. knownVersion",
				)
			: undefined;
	if (knownVersionField === productField) {
		throw new NodeOperationError(
			context.getNode(),
			`Known Version Field and Product Field both name "${productField}"`,
			{
				itemIndex: 0,
				description:
					"The known version is left out of the product's XML, the product id never: name another field",
			},
		);
	}
	const collect =
		partOfCatalogue &&
		knownVersionField === undefined &&
		context.getNodeParameter('source', 0) === 'items' &&
		context.getNodeParameter('sendChangedProducts', 0, 'withEachRun') === 'collected'
			? collectSettings(context)
			: undefined;
	return {
		productField,
		partOfCatalogue,
		...(collect && { collect }),
		...(knownVersionField !== undefined && { knownVersionField }),
		validateOnly: context.getNodeParameter('validateOnly', 0, false) === true,
		sendAll: context.getNodeParameter('sendAllProducts', 0, false) === true,
		countMissing:
			!partOfCatalogue && context.getNodeParameter('countMissingProducts', 0, false) === true,
		outputUnchanged: context.getNodeParameter('outputUnchangedProducts', 0, true) !== false,
	};
}

/** A field name the node reads from every item, checked before any request. */
function fieldName(
	context: IExecuteFunctions,
	parameter: string,
	displayName: string,
	/** What the field does, as the error's advice says it. */
	purpose: string,
): string {
	const name = String(context.getNodeParameter(parameter, 0, '')).trim();
	if (name === '') {
		throw new NodeOperationError(context.getNode(), `${displayName} is empty`, {
			itemIndex: 0,
			description: `Name the field of each input item that ${purpose}`,
		});
	}
	return name;
}

/** The memory name and document size of a collection, checked before any request. */
export function collectSettings(context: IExecuteFunctions, itemIndex = 0): CollectSettings {
	const memoryName = String(context.getNodeParameter('memoryName', itemIndex, '')).trim();
	if (memoryName === '') {
		throw new NodeOperationError(context.getNode(), `Memory Name of item ${itemIndex} is empty`, {
			itemIndex,
			description:
				'Name the memory the changed products are collected in, e.g. shop-catalogue: Send Collected Products names it too',
		});
	}
	const productsPerDocument = Number(
		context.getNodeParameter('productsPerDocument', itemIndex, 10_000),
	);
	if (!Number.isInteger(productsPerDocument) || productsPerDocument < 1) {
		throw new NodeOperationError(
			context.getNode(),
			`Products per Document of item ${itemIndex} must be a whole number of 1 or more`,
			{ itemIndex, description: 'e.g. 10000: each document costs one upload and one status read' },
		);
	}
	return { memoryName, productsPerDocument };
}
