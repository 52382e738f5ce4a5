import type { INodeProperties } from 'n8n-workflow';

import type { ResourceOperations } from '../types';
import * as getEnvironmentInfo from './getEnvironmentInfo.operation';

export const operations: ResourceOperations = { getEnvironmentInfo };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['account'] } },
		options: [
			{
				name: 'Get Environment Info',
				value: 'getEnvironmentInfo',
				description:
					'Check the credentials and get the user, customer nodes, languages and countries of the environment',
				action: 'Get environment info',
			},
		],
		default: 'getEnvironmentInfo',
	},
	...getEnvironmentInfo.description,
];
