import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

/** Products `from` up to `to` (excluded), as a shop's page gives them: sku, name, price. */
export function products(from: number, to: number, price = 10): IDataObject[] {
	return Array.from({ length: to - from }, (_, index) => ({
		sku: `P-${from + index}`,
		name: `Product ${from + index}`,
		price,
	}));
}

export const asItems = (json: IDataObject[]): INodeExecutionData[] =>
	json.map((item) => ({ json: item }));

/** Document Upload building a document of the items, Only Changed Products by `sku`, and `extra`. */
export function onlyChangedFromItems(extra: IDataObject = {}): INodeParameters {
	return {
		resource: 'document',
		operation: 'upload',
		source: 'items',
		rootElement: 'Products',
		itemElement: 'Product',
		onlyChangedProducts: true,
		productField: 'sku',
		...extra,
	} as INodeParameters;
}
