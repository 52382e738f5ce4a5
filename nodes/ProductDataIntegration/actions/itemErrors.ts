import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
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

/** The output item that stands for a failed input item when "Continue On Fail" is set. */
export function itemFailure(
	context: IExecuteFunctions,
	error: unknown,
	itemIndex: number,
): INodeExecutionData {
	const nodeError = asNodeError(context, error, itemIndex);
	return {
		json: {
			error: nodeError.message,
			...(nodeError.description ? { errorDetails: nodeError.description } : {}),
		},
		pairedItem: { item: itemIndex },
	};
}
