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

export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const module = resources[resource]?.[operation];
	if (!module) {
		throw new NodeOperationError(
			this.getNode(),
			`The operation "${operation}" of the resource "${resource}" is not supported`,
		);
	}

	const failures = new ItemFailures(this);
	if ('executeBatch' in module) {
		return [await module.executeBatch.call(this, items, failures)];
	}

	const output: INodeExecutionData[] = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const result = await module.executeItem.call(this, itemIndex);
			for (const json of Array.isArray(result) ? result : [result]) {
				output.push({ json, pairedItem: { item: itemIndex } });
			}
		} catch (error) {
			output.push(failures.output(error, [itemIndex]));
		}
	}
	return [output];
}
