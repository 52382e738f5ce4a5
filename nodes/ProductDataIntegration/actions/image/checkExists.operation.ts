import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { serviceRequest } from '../../../shared/transport';
import { getCustomerOverride } from '../../../shared/customer';
import { customerOnlyOptions } from '../../../shared/descriptions';
import { HASHCODE } from '../../../shared/ports';

const properties: INodeProperties[] = [
	{
		displayName: 'Hashcode',
		name: 'hashcode',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. 5f0c6a1e9b2d4c8f8a7e3b1d2c4f6a8b',
		description:
			'Image hashcode the service returned when the image was uploaded (not its MD5 and not a URL: use Find for those)',
		hint: "The hashcode field of an image upload's output",
	},
	customerOnlyOptions,
];

export const description = updateDisplayOptions(
	{ show: { resource: ['image'], operation: ['checkExists'] } },
	properties,
);

export async function executeItem(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	const hashcode = String(context.getNodeParameter('hashcode', itemIndex, '') ?? '').trim();
	if (hashcode === '') {
		throw new NodeOperationError(context.getNode(), `The Hashcode of item ${itemIndex} is empty`, {
			itemIndex,
			description: 'Give the image hashcode that the upload of the image returned',
		});
	}
	if (!HASHCODE.test(hashcode)) {
		throw new NodeOperationError(
			context.getNode(),
			`The Hashcode of item ${itemIndex} is not an image hashcode: ${JSON.stringify(hashcode.slice(0, 200))}`,
			{
				itemIndex,
				description:
					'An image hashcode is 1 to 128 letters, digits and the signs . _ ~ : + / = -, begins with a letter or digit, and has no "." or ".." between slashes. Give the hashcode field of an image upload\'s output.',
			},
		);
	}
	const response = await serviceRequest(context, {
		method: 'HEAD',
		path: `/api/images/${encodeURIComponent(hashcode)}`,
		customer: getCustomerOverride(context, itemIndex),
		itemIndex,
		responseType: 'none',
		allowStatus: [404],
	});
	return { hashcode, exists: response.statusCode !== 404 };
}
