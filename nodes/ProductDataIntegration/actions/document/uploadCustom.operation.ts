import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { uploadFields } from './uploadFields';
import type { ItemFailures } from '../itemErrors';
import { executeUpload } from './uploadOperation';

export const description = updateDisplayOptions(
	{ show: { resource: ['document'], operation: ['uploadCustom'] } },
	uploadFields(
		'The custom XML document to upload, as it is (not XML-encoded); the service transforms it with the XSLTs set up for the account',
	),
);

export async function executeBatch(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
): Promise<INodeExecutionData[]> {
	return await executeUpload(context, items, failures, 'xml/custom');
}
