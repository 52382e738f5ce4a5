import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

/** Makes any failure a node error that names the item, keeping the service's own error intact. */
export function asNodeError(
	context: IExecuteFunctions,
	error: unknown,
	itemIndex: number,
): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) {
		error.context.itemIndex ??= itemIndex;
		return error;
	}
	return new NodeOperationError(context.getNode(), error as Error, { itemIndex });
}

/** `pairedItem` for an output item that stands for one or several input items. */
export function pairedItems(itemIndexes: number[]): INodeExecutionData['pairedItem'] {
	return itemIndexes.length === 1
		? { item: itemIndexes[0] }
		: itemIndexes.map((item) => ({ item }));
}

/**
 * What a failed item becomes, decided once per node run from the node's Continue On Fail setting:
 * the router makes it and hands it to every operation, so no operation decides this on its own.
 */
export class ItemFailures {
	readonly continueOnFail: boolean;

	constructor(private readonly context: IExecuteFunctions) {
		this.continueOnFail = context.continueOnFail();
	}

	/**
	 * With Continue On Fail, the output item of the failed input items (the error beside `json`,
	 * paired with every item in `itemIndexes`). Without it, throws the error that ends the run,
	 * first given to `beforeStop` to add what the run had already done.
	 */
	output(
		error: unknown,
		itemIndexes: number[],
		json: IDataObject = {},
		beforeStop?: (error: NodeApiError | NodeOperationError) => void,
	): INodeExecutionData {
		const nodeError = asNodeError(this.context, error, itemIndexes[0]);
		if (!this.continueOnFail) {
			beforeStop?.(nodeError);
			throw nodeError;
		}
		return {
			json: {
				...json,
				error: nodeError.message,
				...(nodeError.description ? { errorDetails: nodeError.description } : {}),
			},
			pairedItem: pairedItems(itemIndexes),
		};
	}
}
