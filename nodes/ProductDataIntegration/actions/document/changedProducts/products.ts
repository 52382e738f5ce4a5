import { createHash } from 'crypto';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { mapWithPauses } from '../../../../shared/pauses';
import {
	cleanServiceText,
	customerScope,
	getServiceCredentials,
	type CustomerOverride,
} from '../../../../shared/transport';
import { MAX_PRODUCTS_PER_RUN, type ProductEntry, type Recalled } from './memory';

/**
 * The product of each item, checked before anything is read or sent: a missing field, a value that
 * is not a string or number, or a product that an earlier item already named is an error of that
 * item that names the field. A run of the whole catalogue holds at most MAX_PRODUCTS_PER_RUN (a run
 * of part of it is bounded by the memory per product instead).
 */
export async function readProducts(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	productField: string,
	wholeCatalogue: boolean,
): Promise<Array<{ product: string } | { error: NodeOperationError }>> {
	if (wholeCatalogue && items.length > MAX_PRODUCTS_PER_RUN) {
		throw new NodeOperationError(
			context.getNode(),
			`Only Changed Products remembers at most ${MAX_PRODUCTS_PER_RUN} products per node; this run has ${items.length} items`,
			{
				itemIndex: 0,
				description:
					'Nothing was sent. Hand the catalogue to the node in parts (Products in Each Run: Part of the Catalogue), split it over several Upload nodes, or turn off Only Changed Products.',
			},
		);
	}
	const firstItemOf = new Map<string, number>();
	return await mapWithPauses(items, (item, itemIndex) => {
		const fail = (message: string, description: string) => ({
			error: new NodeOperationError(context.getNode(), message, { itemIndex, description }),
		});
		const value = item.json[productField];
		if (value === undefined || value === null) {
			return fail(
				`Item ${itemIndex} has no product field "${productField}" (Product Field)`,
				`Fields of this item: ${Object.keys(item.json).slice(0, 20).join(', ') || '(none)'}. Nothing was sent for it.`,
			);
		}
		if (!(typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))) {
			return fail(
				`The product field "${productField}" of item ${itemIndex} is ${Array.isArray(value) ? 'a list' : `a ${typeof value}`}, not a string or number`,
				'A product is identified by text or a number, e.g. an SKU. Nothing was sent for it.',
			);
		}
		const product = String(value);
		if (product.trim() === '') {
			return fail(
				`The product field "${productField}" of item ${itemIndex} is empty`,
				'Nothing was sent for it.',
			);
		}
		const earlier = firstItemOf.get(product);
		if (earlier !== undefined) {
			return fail(
				`Item ${itemIndex} names the same product as item ${earlier} in the field "${productField}": "${cleanServiceText(product, 100)}"`,
				'Each product may come once per run: which of the two the service would keep is not known. Nothing was sent for it.',
			);
		}
		firstItemOf.set(product, itemIndex);
		return { product };
	});
}

/**
 * The memory's entry of one item: its product, where it goes (the account, the item's customer node
 * and the route), and a digest of what is sent for it (`content`).
 */
export async function productEntry(
	context: IExecuteFunctions,
	itemIndex: number,
	endpoint: string,
	product: string,
	content: string,
	customer: CustomerOverride | undefined,
): Promise<ProductEntry> {
	const credentials = await getServiceCredentials(context, itemIndex);
	return {
		destination: customerScope(credentials, customer, endpoint),
		product,
		content,
	};
}

/** What Build From Items makes of an item: its element name and its fields, in their order. */
export function itemContent(
	context: IExecuteFunctions,
	item: INodeExecutionData,
	itemIndex: number,
): string {
	const itemElement = String(context.getNodeParameter('itemElement', itemIndex, ''));
	return createHash('sha256')
		.update(`${itemElement}\n${JSON.stringify(item.json)}`)
		.digest('hex');
}

export type ProductReason = 'unchanged' | 'changed' | 'sentAgainAfterFailure';

export function reasonOf(recalled: Recalled): ProductReason {
	if (recalled.unchanged) return 'unchanged';
	return recalled.failedBefore ? 'sentAgainAfterFailure' : 'changed';
}
