import type { INodeProperties } from 'n8n-workflow';

import type { ResourceOperations } from '../types';
import * as checkExists from './checkExists.operation';
import * as find from './find.operation';
import * as upload from './upload.operation';

export const operations: ResourceOperations = { upload, checkExists, find };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['image'] } },
		options: [
			{
				name: 'Check Exists',
				value: 'checkExists',
				description:
					'Check whether the service still has the image with a given image hashcode (the ID an upload returned); returns exists true or false',
				action: 'Check if an image exists',
			},
			{
				name: 'Find',
				value: 'find',
				description:
					'Find the image hashcode of an image by the MD5 hash of its file or by the external URL it was fetched from; returns found true or false and the hashcode',
				action: 'Find an image by MD5 or URI',
			},
			{
				name: 'Upload',
				value: 'upload',
				description:
					'Upload the images in binary fields of each item (one request per item) and get the image hashcode of each, to bind images to products',
				action: 'Upload images',
			},
		],
		default: 'upload',
	},
	...upload.description,
	...checkExists.description,
	...find.description,
];
