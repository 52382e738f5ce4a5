import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { executeUpload, uploadDescription } from './uploadDocuments';

export const description = uploadDescription('upload', 'xml');

export async function executeBatch(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	return await executeUpload.call(this, items, 'xml');
}
