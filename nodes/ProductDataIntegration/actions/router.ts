import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import * as account from './account/Account.resource';
import * as document from './document/Document.resource';
import * as image from './image/Image.resource';
import * as uploadSession from './uploadSession/UploadSession.resource';
import { ItemFailures } from './itemErrors';
import type { ResourceOperations } from './types';

const resources: Record<string, ResourceOperations> = {
	account: account.operations,
	document: document.operations,
	image: image.operations,
	uploadSession: uploadSession.operations,
};

export async function router(context: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = context.getInputData();
	const resource = context.getNodeParameter('resource', 0) as string;
	const operation = context.getNodeParameter('operation', 0) as string;
	const module = resources[resource]?.[operation];
	if (!module) {
		throw new NodeOperationError(
			context.getNode(),
			`The operation "${operation}" of the resource "${resource}" is not supported`,
		);
	}

	const failures = new ItemFailures(context);
	if ('executeBatch' in module) {
		return [await module.executeBatch(context, items, failures)];
	}

	const output: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const result = await module.executeItem(context, itemIndex);
			for (const json of Array.isArray(result) ? result : [result]) {
				output.push({ json, pairedItem: { item: itemIndex } });
			}
		} catch (error) {
			output.push(failures.output(error, [itemIndex]));
		}
	}
	return [output];
}
