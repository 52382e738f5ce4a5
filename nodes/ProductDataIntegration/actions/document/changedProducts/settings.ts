import type { IExecuteFunctions, INodeProperties } from 'n8n-workflow';
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

export interface ChangedProductsSettings {
	productField: string;
	/** Each run holds part of the catalogue: the memory per product (see partMemory.ts). */
	partOfCatalogue: boolean;
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
	const productField = String(context.getNodeParameter('productField', 0, '')).trim();
	if (productField === '') {
		throw new NodeOperationError(context.getNode(), 'Product Field is empty', {
			itemIndex: 0,
			description: 'Name the field of each input item that identifies its product, e.g. sku',
		});
	}
	const partOfCatalogue =
		context.getNodeParameter('productsInEachRun', 0, 'wholeCatalogue') === 'partOfCatalogue';
	return {
		productField,
		partOfCatalogue,
		validateOnly: context.getNodeParameter('validateOnly', 0, false) === true,
		sendAll: context.getNodeParameter('sendAllProducts', 0, false) === true,
		countMissing:
			!partOfCatalogue && context.getNodeParameter('countMissingProducts', 0, false) === true,
		outputUnchanged: context.getNodeParameter('outputUnchangedProducts', 0, true) !== false,
	};
}
