import type { INodeProperties } from 'n8n-workflow';

import type { ResourceOperations } from '../types';
import * as getResult from './getResult.operation';
import * as isDone from './isDone.operation';
import * as waitForCompletion from './waitForCompletion.operation';

export const operations: ResourceOperations = { isDone, getResult, waitForCompletion };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['uploadSession'] } },
		options: [
			{
				name: 'Get Result',
				value: 'getResult',
				description:
					'Get the outcome of an upload: processing, succeeded, or failed with the URL of its error message',
				action: 'Get the result of an upload session',
			},
			{
				name: 'Is Done',
				value: 'isDone',
				description: 'Check whether the service has finished processing an upload',
				action: 'Check whether an upload session is done',
			},
			{
				name: 'Wait for Completion',
				value: 'waitForCompletion',
				description:
					'Wait until uploads have been processed (or a timeout passes) and get their outcome; all items are awaited together',
				action: 'Wait for upload sessions to complete',
			},
		],
		default: 'getResult',
	},
	...isDone.description,
	...getResult.description,
	...waitForCompletion.description,
];
