import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { serviceRequest, type CustomerOverride } from '../../../shared/transport';
import { imagePart, type BinaryImage } from './binaryImages';
import { encodeMultipart } from './multipart';
import { parseUploadAnswer } from './responses';

/** An image waiting for its upload, with the input item it belongs to. */
export interface PendingImage {
	itemIndex: number;
	/** Measured: md5 and bytes are set. */
	image: BinaryImage;
}

/** How much one upload request may carry. A refusal as too large lowers both for the rest of the run. */
export interface BatchLimits {
	images: number;
	bytes: number;
}

/** What every request of one batch shares: images for other customers or processing go apart. */
export interface BatchTarget {
	customer: CustomerOverride | undefined;
	invert: boolean;
	clippingPath: string;
}

/** An image's result, or the error that fails its item. */
export type ImageOutcome = { result: IDataObject } | { error: unknown };

// Boundary line, Content-Disposition with the file name and Content-Type of one part, roughly:
// counted so that many small images do not overshoot a byte limit by their headers.
const PART_OVERHEAD_BYTES = 300;

function partBytes(pending: PendingImage): number {
	return (pending.image.bytes ?? 0) + PART_OVERHEAD_BYTES;
}

export function describeImage(image: BinaryImage): IDataObject {
	return {
		fileName: image.fileName,
		mimeType: image.mimeType,
		md5: image.md5,
		bytes: image.bytes,
		binaryProperty: image.binaryProperty,
	};
}

/** Consecutive images in requests of at most `limits`; a request always holds at least one image. */
function chunk(images: PendingImage[], limits: BatchLimits): PendingImage[][] {
	const chunks: PendingImage[][] = [];
	let current: PendingImage[] = [];
	let bytes = 0;
	for (const pending of images) {
		const size = partBytes(pending);
		if (current.length > 0 && (current.length >= limits.images || bytes + size > limits.bytes)) {
			chunks.push(current);
			current = [];
			bytes = 0;
		}
		current.push(pending);
		bytes += size;
	}
	if (current.length > 0) chunks.push(current);
	return chunks;
}

/**
 * Uploads the images in as few requests as the limits allow. The service states no size limit, so
 * a request refused as too large (413) is split in two and each half sent again, and later
 * requests of the run stay below what was refused; an image refused on its own fails its item.
 * Any other failure of a request fails all its images alike (an upload whose answer was lost may
 * or may not have stored any of them). Outcomes are in the order of `images`.
 */
export async function uploadInBatches(
	context: IExecuteFunctions,
	images: PendingImage[],
	target: BatchTarget,
	limits: BatchLimits,
): Promise<ImageOutcome[]> {
	const outcomes: ImageOutcome[] = [];
	for (const batch of chunk(images, limits)) {
		const bytes = batch.reduce((sum, pending) => sum + partBytes(pending), 0);
		let answer: string | undefined;
		try {
			answer = await postImages(context, batch, target);
		} catch (error) {
			outcomes.push(...batch.map(() => ({ error })));
			continue;
		}
		if (answer !== undefined) {
			outcomes.push(...describeUpload(batch, answer).map((result) => ({ result })));
		} else if (batch.length === 1) {
			outcomes.push({ error: tooLargeError(context, batch[0]) });
		} else {
			// Which limit was hit the answer does not say: halving the count halves the size of
			// images alike, and no later request is as large as the one refused.
			limits.images = Math.min(limits.images, Math.ceil(batch.length / 2));
			limits.bytes = Math.min(limits.bytes, Math.max(1, bytes - 1));
			const half = Math.ceil(batch.length / 2);
			outcomes.push(...(await uploadInBatches(context, batch.slice(0, half), target, limits)));
			outcomes.push(...(await uploadInBatches(context, batch.slice(half), target, limits)));
		}
	}
	return outcomes;
}

function tooLargeError(
	context: IExecuteFunctions,
	{ itemIndex, image }: PendingImage,
): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`The service refused the image in binary field "${image.binaryProperty}" of item ${itemIndex} as too large (413)`,
		{
			itemIndex,
			description: `The image has ${image.bytes} bytes and was sent on its own. Nothing was stored; make the image smaller to upload it.`,
		},
	);
}

/** One POST for the batch: the answer's text, or undefined when the service refused it as too large. */
async function postImages(
	context: IExecuteFunctions,
	batch: PendingImage[],
	target: BatchTarget,
): Promise<string | undefined> {
	// A body for every attempt (one that was sent cannot be sent again after a 429); each part is
	// read only when the body reaches it.
	const multipart = encodeMultipart(
		batch.map(({ itemIndex, image }) => imagePart(context, itemIndex, image)),
	);
	const qs: IDataObject = {};
	if (target.invert) qs.invert = 'true';
	if (target.clippingPath !== '') qs.clippingpath = target.clippingPath;
	try {
		const response = await serviceRequest(context, {
			method: 'POST',
			path: '/api/images',
			qs,
			headers: multipart.headers,
			body: multipart.body,
			customer: target.customer,
			itemIndex: batch[0].itemIndex,
			responseType: 'text',
			allowStatus: [413],
		});
		return response.statusCode === 413 ? undefined : (response.body as string);
	} finally {
		multipart.close();
	}
}

function describeUpload(batch: PendingImage[], answer: string): IDataObject[] {
	const images = batch.map((pending) => pending.image);
	const returned = parseUploadAnswer(answer);
	if (returned === undefined) {
		const warning =
			'The service answered the upload in a layout this node cannot read, so no hashcodes are set: see raw';
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
