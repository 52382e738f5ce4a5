import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { readOncePerRun, serviceRequest } from '../../../shared/transport';

const properties: INodeProperties[] = [
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			{
				displayName: 'Include Auth Token',
				name: 'includeAuthToken',
				type: 'boolean',
				default: false,
				description:
					'Whether to include authToken and authTokenBytes in the output. They identify the user, so they are left out unless asked for.',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['account'], operation: ['getEnvironmentInfo'] } },
	properties,
);

export async function executeItem(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	const { includeAuthToken = false } = context.getNodeParameter('options', itemIndex, {}) as {
		includeAuthToken?: boolean;
	};
	const info = await readOncePerRun(context, 'environment', async () => {
		const { body } = await serviceRequest(context, {
			method: 'GET',
			path: '/api/auth/me',
			itemIndex,
		});
		return (body ?? {}) as IDataObject;
	});
	if (!includeAuthToken) {
		delete info.authToken;
		delete info.authTokenBytes;
	}
	return info;
}
