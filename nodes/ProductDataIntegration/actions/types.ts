import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';

import type { ItemFailures } from './itemErrors';

/**
 * Most operations are a function of one input item: the router runs them item by item and owns
 * `continueOnFail`, `pairedItem` and error wrapping for them.
 */
export interface ItemOperation {
	description: INodeProperties[];
	/** The item's output: one item, or one per element of the list. */
	executeItem(context: IExecuteFunctions, itemIndex: number): Promise<IDataObject | IDataObject[]>;
}

/**
 * Operations that need the whole batch at once (one document built from many items, uploads whose
 * sessions are then awaited together). They set `pairedItem` themselves and hand every failed item
 * to `failures`, which decides from Continue On Fail whether it becomes an output item or ends the run.
 */
export interface BatchOperation {
	description: INodeProperties[];
	executeBatch(
		context: IExecuteFunctions,
		items: INodeExecutionData[],
		failures: ItemFailures,
	): Promise<INodeExecutionData[]>;
}

export type OperationModule = ItemOperation | BatchOperation;

export type ResourceOperations = Record<string, OperationModule>;
