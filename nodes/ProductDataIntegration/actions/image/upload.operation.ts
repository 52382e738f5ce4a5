import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { customerOption, allowedInternalHostsOption } from '../../../shared/descriptions';
import {
	DEFAULT_LOOK_UP_AGAIN_DAYS,
	MAX_LOOK_UP_AGAIN_DAYS,
	MIN_LOOK_UP_AGAIN_DAYS,
} from '../../../shared/knownImages';
import type { ItemFailures } from '../itemErrors';
import { DEFAULT_MAX_PHOTO_MEGABYTES, DEFAULT_PHOTO_TIMEOUT_SECONDS } from './photos';
import { uploadItems } from './uploadItems';
import {
	DEFAULT_IMAGES_PER_REQUEST,
	DEFAULT_MAX_REQUEST_MEGABYTES,
	DEFAULT_PHOTOS_AT_ONCE,
} from './uploadSettings';

const properties: INodeProperties[] = [
	{
		displayName: 'Images From',
		name: 'imagesFrom',
		type: 'options',
		options: [
			{
				name: 'All Binary Fields',
				value: 'all',
				description: 'Upload every binary field of the input item',
			},
			{
				name: 'Named Binary Fields',
				value: 'named',
				description: 'Upload the binary fields named below',
			},
			{
				name: 'Photo URL',
				value: 'url',
				description:
					'Fetch the photo from its URL (one per item) only when it is not known or has changed, and upload it: unchanged photos are not downloaded',
			},
		],
		default: 'named',
		description: 'Where the images of each input item are',
	},
	{
		displayName: 'Photo URL',
		name: 'photoUrl',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. {{ $json.imageUrl }}',
		description:
			"The photo's http(s) URL at its host (a shop, a CDN). Fetched through n8n without the account's credential, at most Max Photo Size and Photo Timeout.",
		displayOptions: { show: { imagesFrom: ['url'] } },
	},
	{
		displayName: 'Photo Version',
		name: 'photoVersion',
		type: 'string',
		default: '',
		placeholder: 'e.g. {{ $json.imageUpdatedAt }}',
		description:
			"What the source says of the photo's version (e.g. an updatedAt), if it says anything: with Known Version equal to it, and Known MD5 and Known Hashcode given, the photo is not fetched. Empty: the host's ETag or Last-Modified is asked instead.",
		displayOptions: { show: { imagesFrom: ['url'] } },
	},
	{
		displayName: 'Input Binary Fields',
		name: 'binaryProperties',
		type: 'string',
		default: 'data',
		required: true,
		placeholder: 'e.g. data, image2',
		hint: 'The names of the input binary fields containing the images to be uploaded, separated by commas',
		displayOptions: { show: { imagesFrom: ['named'] } },
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			allowedInternalHostsOption,
			{
				displayName: 'Clipping Path',
				name: 'clippingPath',
				type: 'string',
				default: '',
				description:
					'Name of the clipping path in the images to cut them out with. Empty: no clipping path.',
			},
			customerOption,
			{
				displayName: 'Images Per Request',
				name: 'imagesPerRequest',
				type: 'number',
				typeOptions: { minValue: 1, numberPrecision: 0 },
				default: DEFAULT_IMAGES_PER_REQUEST,
				description:
					"The most images sent in one request. The images of consecutive items share requests: every request counts against the account's request limit, however many images it carries.",
			},
			{
				displayName: 'Invert Clipping Path',
				name: 'invert',
				type: 'boolean',
				default: false,
				description: 'Whether to remove the inside of the clipping path instead of keeping it',
			},
			{
				displayName: 'Known Hashcode',
				name: 'knownHashcode',
				type: 'string',
				default: '',
				placeholder: 'e.g. {{ $json.knownHashcode }}',
				description:
					'The hashcode the service gave for the item\'s image in an earlier run, with Known MD5: an image of the item with that MD5 gets it without a request (known: "item"). Lets the workflow keep its own memory (e.g. in a Data Table), which outlives restarts without Redis.',
			},
			{
				displayName: 'Known MD5',
				name: 'knownMd5',
				type: 'string',
				default: '',
				placeholder: 'e.g. {{ $json.knownMd5 }}',
				description:
					"The MD5 of the item's image when it got Known Hashcode (each output item gives md5 and hashcode to store)",
			},
			{
				displayName: 'Known Version',
				name: 'knownVersion',
				type: 'string',
				default: '',
				placeholder: 'e.g. {{ $json.knownVersion }}',
				description:
					'With Photo URL: the version the photo had when it got Known Hashcode (the output\'s version). Given with Known MD5 and Known Hashcode, the same Photo Version, or the host answering "not modified", costs no download and no request; without them the photo is downloaded.',
			},
			{
				displayName: 'Look Up Again After (Days)',
				name: 'lookUpAgainAfterDays',
				type: 'number',
				typeOptions: { minValue: MIN_LOOK_UP_AGAIN_DAYS, maxValue: MAX_LOOK_UP_AGAIN_DAYS },
				default: DEFAULT_LOOK_UP_AGAIN_DAYS,
				description:
					'How long a known image is trusted (with Remember Known Images on). After that it is looked up (Skip Existing) or uploaded again, in case the service removed it.',
			},
			{
				displayName: 'Max Photo Size (MB)',
				name: 'maxPhotoMegabytes',
				type: 'number',
				typeOptions: { minValue: 0.001 },
				default: DEFAULT_MAX_PHOTO_MEGABYTES,
				description:
					'With Photo URL: the largest photo fetched. A larger one fails its item, and the rest of it is not read.',
			},
			{
				displayName: 'Max Request Size (MB)',
				name: 'maxRequestMegabytes',
				type: 'number',
				typeOptions: { minValue: 0.1 },
				default: DEFAULT_MAX_REQUEST_MEGABYTES,
				description:
					'The most image data sent in one request. A request the service refuses as too large (413) is split and sent again, and the rest of the run sends smaller ones.',
			},
			{
				displayName: 'Photo Timeout (Seconds)',
				name: 'photoTimeoutSeconds',
				type: 'number',
				typeOptions: { minValue: 1 },
				default: DEFAULT_PHOTO_TIMEOUT_SECONDS,
				description:
					'With Photo URL: the longest a photo may take to arrive. A slower one fails its item.',
			},
			{
				displayName: 'Photos At Once',
				name: 'photosAtOnce',
				type: 'number',
				typeOptions: { minValue: 1, numberPrecision: 0 },
				default: DEFAULT_PHOTOS_AT_ONCE,
				description:
					"With Photo URL: how many photos are fetched at the same time, the next items' photos while one waits. Photos fetched and not yet sent stay within Max Request Size (reckoned by the largest photo so far). Output order is unchanged.",
			},
			{
				displayName: 'Remember Known Images',
				name: 'rememberKnownImages',
				type: 'boolean',
				default: true,
				description:
					'Whether to remember the hashcode of every image uploaded or looked up, per account and customer node, and answer a known image without a request (known: true). Kept in Redis when the account shares its request limit through Redis, otherwise in this n8n process only.',
			},
			{
				displayName: 'Skip Existing',
				name: 'skipExisting',
				type: 'boolean',
				default: false,
				description:
					'Whether to look each image that is not known yet up by its MD5 first and upload only the ones the service does not have. Costs one request per image looked up, saves uploading images twice.',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['image'], operation: ['upload'] } },
	properties,
);

export async function executeBatch(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
): Promise<INodeExecutionData[]> {
	return await uploadItems(context, items, failures);
}
