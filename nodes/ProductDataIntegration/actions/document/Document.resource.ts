import type { INodeProperties } from 'n8n-workflow';

import type { ResourceOperations } from '../types';
import * as getMany from './getMany.operation';
import * as sendCollected from './sendCollected.operation';
import * as upload from './upload.operation';
import * as uploadCustom from './uploadCustom.operation';

export const operations: ResourceOperations = { upload, uploadCustom, getMany, sendCollected };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['document'] } },
		options: [
			{
				name: 'Get Many',
				value: 'getMany',
				description:
					'List the XML documents uploaded on a given day, with their session IDs and errors',
				action: 'Get many uploaded documents',
			},
			{
				name: 'Send Collected Products',
				value: 'sendCollected',
				description:
					'Send the changed products that runs of Only Changed Products collected under a Memory Name, in full documents, and remember what the service confirms',
				action: 'Send collected products',
			},
			{
				name: 'Upload',
				value: 'upload',
				description:
					'Upload an XML document in one of the service’s own formats to its processing queue and get its session ID',
				action: 'Upload a document',
			},
			{
				name: 'Upload Custom XML',
				value: 'uploadCustom',
				description:
					'Upload a custom XML document, which the service transforms with the XSLTs set up for the account before queueing it',
				action: 'Upload a custom XML document',
			},
		],
		default: 'upload',
	},
	...upload.description,
	...uploadCustom.description,
	...getMany.description,
	...sendCollected.description,
];
