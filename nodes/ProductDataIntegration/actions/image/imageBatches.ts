import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { edition } from '../../../shared/ports';
import { serviceMessage, serviceRequest, type CustomerOverride } from '../../../shared/transport';
import { imageName, imagePart, type BinaryImage } from './binaryImages';
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
	/**
	 * Whether a request refused as invalid (400) is narrowed down to the part at fault. Cleared when
	 * a narrowing stored no image: then the request itself is likely at fault (e.g. its clipping
	 * path), and narrowing again would only spend requests.
	 */
	narrowInvalid: boolean;
}

/** What every request of one batch shares: images for other customers or processing go apart. */
export interface BatchTarget {
	customer: CustomerOverride | undefined;
	invert: boolean;
	clippingPath: string;
}

/**
 * What narrowing a refused request may still spend. Halving finds one bad image among n in at most
 * 2 × ceil(log2 n) requests; when the request itself is at fault (its clipping path, a customer
 * node it may not use) every half is refused too, and halving down to single images would cost
 * 2n - 1 requests on every run. Two more allow for a 413 on the way.
 */
interface Narrowing {
	refusedImages: number;
	/** The most requests it may send. */
	bound: number;
	sent: number;
	serviceWords: string;
}

function narrowingOf(refusedImages: number, serviceWords: string): Narrowing {
	const bound = 2 * Math.ceil(Math.log2(refusedImages)) + 2;
	return { refusedImages, bound, sent: 0, serviceWords };
}

/** An image's result, or the error that fails its item. */
type ImageOutcome = { result: IDataObject } | { error: unknown };

// Boundary line, Content-Disposition with the file name and Content-Type of one part, roughly:
// counted so that many small images do not overshoot a byte limit by their headers.
const PART_OVERHEAD_BYTES = 300;

function partBytes(pending: PendingImage): number {
	return (pending.image.bytes ?? 0) + PART_OVERHEAD_BYTES;
}

export function describeImage(image: BinaryImage): IDataObject {
	const source =
		image.url !== undefined
			? { url: image.url, version: image.version }
			: { binaryProperty: image.binaryProperty };
	return {
		fileName: image.fileName,
		mimeType: image.mimeType,
		md5: image.md5,
		bytes: image.bytes,
		...source,
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
 * requests of the run stay below what was refused. A request refused as invalid (400) is split
 * the same way, since the service refuses a whole request for one part it cannot read and names
 * none: the good parts are stored, the bad one fails its item alone, within a bound of requests
 * (see Narrowing). Any other failure of a request fails all its images alike (an upload whose
 * answer was lost may or may not have stored any of them). Outcomes are in the order of `images`.
 */
export async function uploadInBatches(
	context: IExecuteFunctions,
	images: PendingImage[],
	target: BatchTarget,
	limits: BatchLimits,
): Promise<ImageOutcome[]> {
	return await uploadChunks(context, images, target, limits, undefined);
}

async function uploadChunks(
	context: IExecuteFunctions,
	images: PendingImage[],
	target: BatchTarget,
	limits: BatchLimits,
	narrowing: Narrowing | undefined,
): Promise<ImageOutcome[]> {
	const outcomes: ImageOutcome[] = [];
	for (const batch of chunk(images, limits)) {
		outcomes.push(...(await uploadBatch(context, batch, target, limits, narrowing)));
	}
	return outcomes;
}

/** `narrowing`: the batch is part of a request refused as invalid. */
async function uploadBatch(
	context: IExecuteFunctions,
	batch: PendingImage[],
	target: BatchTarget,
	limits: BatchLimits,
	narrowing: Narrowing | undefined,
): Promise<ImageOutcome[]> {
	if (narrowing) {
		if (narrowing.sent === narrowing.bound)
			return batch.map((pending) => ({ error: notNarrowedError(context, pending, narrowing) }));
		narrowing.sent++;
	}
	let answer: PostAnswer;
	try {
		answer = await postImages(context, batch, target);
	} catch (error) {
		return batch.map(() => ({ error }));
	}
	if ('text' in answer) return describeUpload(context, batch, answer.text);
	if (answer.refused === 413 && batch.length > 1) {
		// Which limit was hit the answer does not say: halving the count halves the size of
		// images alike, and no later request is as large as the one refused.
		const bytes = batch.reduce((sum, pending) => sum + partBytes(pending), 0);
		limits.images = Math.min(limits.images, Math.ceil(batch.length / 2));
		limits.bytes = Math.min(limits.bytes, Math.max(1, bytes - 1));
		return await uploadHalves(context, batch, target, limits, narrowing);
	}
	if (answer.refused === 400 && batch.length > 1 && limits.narrowInvalid) {
		const outcomes = await uploadHalves(
			context,
			batch,
			target,
			limits,
			narrowing ?? narrowingOf(batch.length, answer.message),
		);
		if (!narrowing && outcomes.every((outcome) => 'error' in outcome)) limits.narrowInvalid = false;
		return outcomes;
	}
	return batch.map((pending) => ({
		error:
			answer.refused === 413
				? tooLargeError(context, pending)
				: invalidError(context, pending, batch.length, answer.message),
	}));
}

async function uploadHalves(
	context: IExecuteFunctions,
	batch: PendingImage[],
	target: BatchTarget,
	limits: BatchLimits,
	narrowing: Narrowing | undefined,
): Promise<ImageOutcome[]> {
	const half = Math.ceil(batch.length / 2);
	return [
		...(await uploadChunks(context, batch.slice(0, half), target, limits, narrowing)),
		...(await uploadChunks(context, batch.slice(half), target, limits, narrowing)),
	];
}

function tooLargeError(
	context: IExecuteFunctions,
	{ itemIndex, image }: PendingImage,
): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`The service refused the image in ${imageName(image)} of item ${itemIndex} as too large (413)`,
		{
			itemIndex,
			description: `The image has ${image.bytes} bytes and was sent on its own. Nothing was stored; make the image smaller to upload it.`,
		},
	);
}

function invalidError(
	context: IExecuteFunctions,
	{ itemIndex, image }: PendingImage,
	imagesInRequest: number,
	serviceWords: string,
): NodeOperationError {
	const alone = imagesInRequest === 1;
	return new NodeOperationError(
		context.getNode(),
		alone
			? `The service refused the image in ${imageName(image)} of item ${itemIndex} as invalid (400)`
			: `The service refused the request holding the image in ${imageName(image)} of item ${itemIndex} as invalid (400)`,
		{
			itemIndex,
			description: alone
				? `The service says: ${serviceWords} Nothing was stored. The file (${image.mimeType}, ${image.bytes} bytes) is likely not an image the service reads.`
				: `The service says: ${serviceWords} Nothing was stored. Images sent alone were refused alike earlier in this run, so the request itself (e.g. its clipping path) is likely at fault.`,
		},
	);
}

function notNarrowedError(
	context: IExecuteFunctions,
	{ itemIndex, image }: PendingImage,
	{ refusedImages, bound, serviceWords }: Narrowing,
): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`The service refused the request holding the image in ${imageName(image)} of item ${itemIndex} as invalid (400)`,
		{
			itemIndex,
			description: `The service says: ${serviceWords} Nothing was stored. Narrowing the refused request of ${refusedImages} images down stopped after ${bound} more requests, its bound, before reaching this image: the request itself (e.g. its clipping path) is likely at fault, or several of its images are.`,
		},
	);
}

type PostAnswer = { text: string } | { refused: 400 | 413; message: string };

/** One POST for the batch: the answer's text, or the refusal of the whole request as invalid or too large. */
async function postImages(
	context: IExecuteFunctions,
	batch: PendingImage[],
	target: BatchTarget,
): Promise<PostAnswer> {
	// A body for every attempt (one that was sent cannot be sent again after a 429); each part is
	// read only when the body reaches it.
	const multipart = edition().encodeMultipart(
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
			allowStatus: [400, 413],
		});
		const text = response.body as string;
		if (response.statusCode === 400 || response.statusCode === 413)
			return { refused: response.statusCode, message: serviceMessage(text) ?? '(no message)' };
		return { text };
	} finally {
		multipart.close();
	}
}

function describeUpload(
	context: IExecuteFunctions,
	batch: PendingImage[],
	answer: string,
): ImageOutcome[] {
	const images = batch.map((pending) => pending.image);
	const returned = parseUploadAnswer(answer);
	if (returned === undefined) {
		const warning =
			'The service answered the upload in a layout this node cannot read, so no hashcodes are set: see raw';
		return images.map((image) => ({ result: { ...describeImage(image), warning, raw: answer } }));
	}
	if (returned.length !== images.length) {
		const warning = `The service returned ${returned.length} hashcode(s) for ${images.length} image(s), so they cannot be matched to the images: see returnedHashcodes`;
		const returnedHashcodes = returned.map((entry) => entry.hashcode ?? null);
		return images.map((image) => ({
			result: { ...describeImage(image), warning, returnedHashcodes },
		}));
	}
	return batch.map(({ itemIndex, image }, n): ImageOutcome => {
		const entry = returned[n];
		if (entry.hashcode === undefined) {
			return {
				error: new NodeOperationError(
					context.getNode(),
					`The service answered the image in ${imageName(image)} of item ${itemIndex} without a usable hashcode`,
					{
						itemIndex,
						description: `Its entry in the answer: ${entry.unusable}. The service may have stored the image; the other images of the request have their hashcodes.`,
					},
				),
			};
		}
		const result: IDataObject = { hashcode: entry.hashcode, ...describeImage(image) };
		if (entry.md5 !== undefined && entry.md5 !== image.md5) {
			result.warning = `The service reports the MD5 ${entry.md5} for this hashcode, but the file sent has the MD5 ${image.md5}`;
		}
		return { result };
	});
}
