import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { uploadFields } from './uploadFields';
import type { ItemFailures } from '../itemErrors';
import { executeUpload } from './uploadOperation';

export const description = updateDisplayOptions(
	{ show: { resource: ['document'], operation: ['upload'] } },
	uploadFields(
		'The XML document to upload, in one of the service’s XML formats, as it is (not XML-encoded)',
	),
);

export async function executeBatch(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
): Promise<INodeExecutionData[]> {
	return await executeUpload(context, items, failures, 'xml');
}
