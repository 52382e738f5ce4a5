import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { ExecutionMemory } from '../../../shared/executionMemory';
import { serviceRequest, type CustomerOverride } from '../../../shared/transport';
import { customerOption, getCustomerOverride } from '../../../shared/customer';
import { imagePart, measureImage, prepareImage, selectBinaryImages, type BinaryImage } from './binaryImages';
import { encodeMultipart } from './multipart';
import { lookUpImage, UNREADABLE_FIND_ANSWER } from './lookup';
import { parseUploadAnswer } from './responses';

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
		],
		default: 'named',
		description: 'Which binary fields of each input item hold the images; all images of one item go in one request',
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
			{
				displayName: 'Clipping Path',
				name: 'clippingPath',
				type: 'string',
				default: '',
				description: 'Name of the clipping path in the images to cut them out with. Empty: no clipping path.',
			},
			customerOption,
			{
				displayName: 'Invert Clipping Path',
				name: 'invert',
				type: 'boolean',
				default: false,
				description: 'Whether to remove the inside of the clipping path instead of keeping it',
			},
			{
				displayName: 'Skip Existing',
				name: 'skipExisting',
				type: 'boolean',
				default: false,
				description:
					'Whether to look each image up by its MD5 first and upload only the ones the service does not have yet. Costs one request per image, saves uploading images twice.',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['image'], operation: ['upload'] } },
	properties,
);

const uploadedImages = new ExecutionMemory<IDataObject[]>();

interface UploadOptions {
	clippingPath?: string;
	invert?: boolean;
	skipExisting?: boolean;
}

function describeImage(image: BinaryImage): IDataObject {
	return {
		fileName: image.fileName,
		mimeType: image.mimeType,
		md5: image.md5,
		bytes: image.bytes,
		binaryProperty: image.binaryProperty,
	};
}

export async function executeItem(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject[]> {
	const source = this.getNodeParameter('imagesFrom', itemIndex, 'named') as 'all' | 'named';
	const names = source === 'named' ? (this.getNodeParameter('binaryProperties', itemIndex) as string) : '';
	const options = this.getNodeParameter('options', itemIndex, {}) as UploadOptions;
	const customer = getCustomerOverride.call(this, itemIndex);
	const images = selectBinaryImages(this, itemIndex, source, names);

	const results = new Map<BinaryImage, IDataObject>();
	let missing = images;
	if (options.skipExisting === true) {
		missing = [];
		for (const image of images) {
			const known = await findExisting(this, itemIndex, image, customer);
			if (known) results.set(image, known);
			else missing.push(image);
		}
	}
	if (missing.length > 0) {
		// Retry On Fail runs the node again with all items: images of an item uploaded on an earlier
		// try of this execution are not uploaded again.
		const key = JSON.stringify([
			this.getExecutionId(),
			this.getNode().name,
			itemIndex,
			customer ?? null,
			options.invert === true,
			options.clippingPath?.trim() ?? '',
			missing.map((image) => [image.binaryProperty, image.fileName, image.mimeType, image.size ?? null]),
		]);
		const earlier = uploadedImages.recall(key);
		const uploaded = earlier?.map((result) => ({ ...result, reused: true })) ?? (await uploadImages(this, itemIndex, missing, options, customer));
		if (!earlier) uploadedImages.remember(key, uploaded);
		missing.forEach((image, n) => results.set(image, uploaded[n]));
	}
	return images.map((image) => {
		const result = results.get(image) as IDataObject;
		return options.skipExisting === true ? { ...result, skipped: result.skipped === true } : result;
	});
}

async function findExisting(
	context: IExecuteFunctions,
	itemIndex: number,
	image: BinaryImage,
	customer: CustomerOverride | undefined,
): Promise<IDataObject | undefined> {
	await measureImage(context, itemIndex, image);
	const lookup = await lookUpImage(context, itemIndex, { md5: image.md5 as string }, customer);
	if (!lookup.found) return undefined;
	if ('hashcode' in lookup) return { hashcode: lookup.hashcode, ...describeImage(image), skipped: true };
	return { ...describeImage(image), skipped: true, warning: UNREADABLE_FIND_ANSWER, raw: lookup.raw };
}

/** One POST for all given images of an item; results in the order of `images`. */
async function uploadImages(
	context: IExecuteFunctions,
	itemIndex: number,
	images: BinaryImage[],
	options: UploadOptions,
	customer: CustomerOverride | undefined,
): Promise<IDataObject[]> {
	for (const image of images) await prepareImage(context, itemIndex, image);

	const multipart = encodeMultipart(images.map((image) => imagePart(context, itemIndex, image)));

	const qs: IDataObject = {};
	if (options.invert === true) qs.invert = 'true';
	const clippingPath = options.clippingPath?.trim() ?? '';
	if (clippingPath !== '') qs.clippingpath = clippingPath;

	let answer: string;
	try {
		const response = await serviceRequest.call(context, {
			method: 'POST',
			path: '/api/images',
			qs,
			headers: multipart.headers,
			body: multipart.body,
			customer,
			itemIndex,
			responseType: 'text',
		});
		answer = response.body as string;
	} finally {
		multipart.close();
	}

	const digests = multipart.digests();
	for (const [n, image] of images.entries()) {
		const digest = digests[n];
		if (digest) {
			image.md5 = digest.md5;
			image.bytes = digest.bytes;
		} else {
			// The service answered before reading a part to its end: hash the image on its own.
			await measureImage(context, itemIndex, image);
		}
	}
	return describeUpload(images, answer);
}

function describeUpload(images: BinaryImage[], answer: string): IDataObject[] {
	const returned = parseUploadAnswer(answer);
	if (returned === undefined) {
		const warning = 'The service answered the upload in a layout this node cannot read, so no hashcodes are set: see raw';
		return images.map((image) => ({ ...describeImage(image), warning, raw: answer }));
	}
	if (returned.length !== images.length) {
		const warning = `The service returned ${returned.length} hashcode(s) for ${images.length} image(s), so they cannot be matched to the images: see returnedHashcodes`;
		const returnedHashcodes = returned.map((entry) => entry.hashcode);
		return images.map((image) => ({ ...describeImage(image), warning, returnedHashcodes }));
	}
	return images.map((image, n) => {
		const entry = returned[n];
		const result: IDataObject = { hashcode: entry.hashcode, ...describeImage(image) };
		if (entry.md5 !== undefined && entry.md5 !== image.md5) {
			result.warning = `The service reports the MD5 ${entry.md5} for this hashcode, but the file sent has the MD5 ${image.md5}`;
		}
		return result;
	});
}
