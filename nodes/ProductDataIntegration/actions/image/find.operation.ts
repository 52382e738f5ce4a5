import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { getCustomerOverride } from '../../../shared/customer';
import { customerOption } from '../../../shared/descriptions';
import { MD5 } from '../../../shared/ports';
import { lookUpImage, UNREADABLE_FIND_ANSWER, type ImageQuery } from './lookup';

const properties: INodeProperties[] = [
	{
		displayName: 'Search By',
		name: 'searchBy',
		type: 'options',
		options: [
			{
				name: 'MD5',
				value: 'md5',
				description: 'The MD5 hash of the original image file',
			},
			{
				name: 'URI',
				value: 'uri',
				description: 'The external URL the service fetched the image from',
			},
		],
		default: 'md5',
		description: 'What identifies the image: the service is asked by exactly one of them',
	},
	{
		displayName: 'MD5',
		name: 'md5',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. 9e107d9d372bb6826bd81d3542a419d6',
		description: 'MD5 hash of the original image file, 32 hexadecimal characters',
		hint: "The MD5 of the file's bytes (an image upload outputs it as md5), not the hashcode the service gave the image",
		displayOptions: { show: { searchBy: ['md5'] } },
	},
	{
		displayName: 'URI',
		name: 'uri',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. https://cdn.example.com/images/1234.jpg',
		description:
			'Absolute http(s) URL the image was fetched from when a product document referenced it',
		hint: 'As the product document wrote it: the address is sent exactly as given, not normalised',
		displayOptions: { show: { searchBy: ['uri'] } },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			customerOption,
			{
				displayName: 'Error If Not Found',
				name: 'errorIfNotFound',
				type: 'boolean',
				default: false,
				description:
					'Whether to fail the item when the service has no such image, instead of returning found = false',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['image'], operation: ['find'] } },
	properties,
);

function readQuery(context: IExecuteFunctions, itemIndex: number): ImageQuery {
	const searchBy = context.getNodeParameter('searchBy', itemIndex) as 'md5' | 'uri';
	const field = searchBy === 'md5' ? 'MD5' : 'URI';
	const value = String(context.getNodeParameter(searchBy, itemIndex, '') ?? '').trim();
	const fail = (message: string, description: string) =>
		new NodeOperationError(context.getNode(), message, { itemIndex, description });

	if (value === '') {
		throw fail(
			`The ${field} of item ${itemIndex} is empty`,
			searchBy === 'md5'
				? 'Give the MD5 hash of the image file: 32 hexadecimal characters'
				: 'Give the absolute http(s) URL the image was fetched from',
		);
	}
	if (searchBy === 'md5') {
		const md5 = value.toLowerCase();
		if (!MD5.test(md5)) {
			throw fail(
				`The MD5 "${value}" of item ${itemIndex} is not an MD5 hash`,
				'An MD5 hash is 32 hexadecimal characters (0-9, a-f), e.g. 9e107d9d372bb6826bd81d3542a419d6. Check that the field holds the hash of the file, not a file name or a URL (search by URI for those).',
			);
		}
		return { md5 };
	}
	let url: URL | undefined;
	try {
		url = new URL(value);
	} catch {
		url = undefined;
	}
	if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
		throw fail(
			`The URI "${value}" of item ${itemIndex} is not an absolute http(s) URL`,
			'Give the full address the image was fetched from, starting with http:// or https://, e.g. https://cdn.example.com/images/1234.jpg',
		);
	}
	// Sent exactly as given: the service knows the URI in the form the product document used.
	return { uri: value };
}

export async function executeItem(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	const query = readQuery(context, itemIndex);
	const { errorIfNotFound = false } = context.getNodeParameter('options', itemIndex, {}) as {
		errorIfNotFound?: boolean;
	};
	const lookup = await lookUpImage(
		context,
		itemIndex,
		query,
		getCustomerOverride(context, itemIndex),
	);
	if (!lookup.found) {
		if (errorIfNotFound) {
			const [[field, value]] = Object.entries(query);
			throw new NodeOperationError(
				context.getNode(),
				`No image with the ${field === 'md5' ? 'MD5' : 'URI'} ${value} exists (item ${itemIndex})`,
				{ itemIndex, description: 'Turn off Error If Not Found to get found = false instead' },
			);
		}
		return { found: false, ...query };
	}
	if ('hashcode' in lookup) return { found: true, hashcode: lookup.hashcode, ...query };
	return { found: true, ...query, warning: UNREADABLE_FIND_ANSWER, raw: lookup.raw };
}
