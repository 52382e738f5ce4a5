import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { ExecutionMemory } from '../../../shared/executionMemory';
import { getCustomerOverride } from '../../../shared/customer';
import { HASHCODE, MD5 } from '../../../shared/hashcode';
import { allowanceFrom, cleanServiceText } from '../../../shared/transport';
import type { ItemFailures } from '../itemErrors';
import { measureImage, selectBinaryImages, type BinaryImage } from './binaryImages';
import {
	DEFAULT_MAX_PHOTO_MEGABYTES,
	DEFAULT_PHOTO_TIMEOUT_SECONDS,
	fetchPhoto,
	photoUrlOf,
	type PhotoBounds,
} from './photos';
import {
	describeImage,
	uploadInBatches,
	type BatchLimits,
	type BatchTarget,
	type PendingImage,
} from './imageBatches';
import {
	DEFAULT_LOOK_UP_AGAIN_DAYS,
	knownImagesOf,
	type KnownImages,
} from '../../../shared/knownImages';
import { lookUpImage, UNREADABLE_FIND_ANSWER } from './lookup';

export const DEFAULT_IMAGES_PER_REQUEST = 50;
/** Below the 30,000,000 bytes that common servers (IIS, ASP.NET Core) accept by default. */
export const DEFAULT_MAX_REQUEST_MEGABYTES = 25;
const MEGABYTE = 1024 * 1024;

interface UploadOptions {
	clippingPath?: string;
	invert?: boolean;
	skipExisting?: boolean;
	imagesPerRequest?: number;
	maxRequestMegabytes?: number;
	rememberKnownImages?: boolean;
	lookUpAgainAfterDays?: number;
	knownHashcode?: string;
	knownMd5?: string;
	knownVersion?: string;
	maxPhotoMegabytes?: number;
	photoTimeoutSeconds?: number;
	allowedInternalHosts?: string;
}

/**
 * The image the item says the service has (Known MD5 and Known Hashcode), checked before any
 * request: both or neither, an MD5 and a hashcode.
 */
function knownFromItem(
	context: IExecuteFunctions,
	itemIndex: number,
	options: UploadOptions,
): { md5: string; hashcode: string } | undefined {
	const hashcode = typeof options.knownHashcode === 'string' ? options.knownHashcode.trim() : '';
	const md5 = typeof options.knownMd5 === 'string' ? options.knownMd5.trim().toLowerCase() : '';
	const refuse = (message: string) =>
		new NodeOperationError(context.getNode(), `${message} in item ${itemIndex}`, {
			itemIndex,
			description:
				'Known MD5 and Known Hashcode come together, as an earlier run gave them (md5 and hashcode of its output item). Leave both empty for an image not known yet.',
		});
	if (hashcode === '' && md5 === '') return undefined;
	if (hashcode === '') throw refuse('Known MD5 is given without Known Hashcode');
	if (md5 === '') throw refuse('Known Hashcode is given without Known MD5');
	if (!MD5.test(md5))
		throw refuse(
			`Known MD5 is not an MD5 (32 hex digits): ${JSON.stringify(cleanServiceText(md5, 64))}`,
		);
	if (!HASHCODE.test(hashcode))
		throw refuse(
			`Known Hashcode is not an image hashcode: ${JSON.stringify(cleanServiceText(hashcode, 64))}`,
		);
	return { md5, hashcode };
}

/** One input item on its way: its images' results as they come, or the output item of its failure. */
interface ItemSlot {
	results: IDataObject[];
	failure?: INodeExecutionData;
}

/** One image of an input item, where its result goes. */
interface ImagePlace extends PendingImage {
	slot: ItemSlot;
	position: number;
	/** Its key in the execution's memory of what was sent (Retry On Fail). */
	retryKey: unknown[];
	/** Where its item remembers what it learns; none with Remember Known Images off. */
	known: KnownImages | undefined;
}

/** An image to send, with the later images of the run that are the same (same bytes, same target). */
interface Waiting extends ImagePlace {
	sameImage: string;
	followers: ImagePlace[];
}

/** No limit learnt from the service yet. */
const NO_CEILING = { images: Infinity, bytes: Infinity };

/**
 * Retry On Fail runs the node again with all items, in the same process: an image that reached the
 * service on an earlier try of this execution is answered from here instead of being sent again.
 */
const uploadedImages = new ExecutionMemory<IDataObject>();

/**
 * Image Upload for all items of a run: images the account is known to have cost no request, an
 * image met before in the run is answered with the first one's result, the others go in requests
 * shared by consecutive items (same customer, processing and limits), in order. An item fails alone
 * when its images cannot be read, or when the service refuses or misanswers its image; a request
 * whose answer was lost fails the items of its images.
 */
export async function uploadItems(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
): Promise<INodeExecutionData[]> {
	const slots: ItemSlot[] = [];
	const run = new UploadRun(context, failures, slots);
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		const slot: ItemSlot = { results: [] };
		slots.push(slot);
		try {
			await run.add(itemIndex, slot);
		} catch (error) {
			run.fail(slot, itemIndex, error);
		}
	}
	await run.flush();
	return slots.flatMap((slot, itemIndex) =>
		slot.failure
			? [slot.failure]
			: slot.results.map((json) => ({ json, pairedItem: { item: itemIndex } })),
	);
}

/** A count or size option of an item: an expression can give any value, so it is checked here. */
function positiveOption(
	context: IExecuteFunctions,
	itemIndex: number,
	field: string,
	value: number,
	minimum: number,
): number {
	if (typeof value === 'number' && Number.isFinite(value) && value >= minimum) return value;
	throw new NodeOperationError(
		context.getNode(),
		`${field} of item ${itemIndex} must be a number of at least ${minimum}, not ${JSON.stringify(value)}`,
		{ itemIndex },
	);
}

class UploadRun {
	/** Lowered for the rest of the run by a request refused as too large or found invalid as a whole. */
	private readonly ceiling: BatchLimits = { ...NO_CEILING, narrowInvalid: true };

	private limits: BatchLimits | undefined;

	private waiting: Waiting[] = [];

	private waitingBytes = 0;

	private target: BatchTarget | undefined;

	/** Target and limits of what waits: an item with others sends in requests of its own. */
	private batchKey = '';

	private readonly known = new Map<string, KnownImages>();

	/** Results of images this run has a hashcode for, by target and md5. */
	private readonly answered = new Map<string, IDataObject>();

	/** Images waiting to be sent, by target and md5. */
	private readonly sending = new Map<string, Waiting>();

	/** Photos fetched in this run, by target, URL and version. */
	private readonly photos = new Map<string, BinaryImage>();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly failures: ItemFailures,
		private readonly slots: ItemSlot[],
	) {}

	/**
	 * Marks the item failed; without Continue On Fail the run stops here, and its error lists the
	 * hashcodes the run got from the service, so that none is lost. Its images that reached the
	 * service in an earlier request stay in its output.
	 */
	fail(slot: ItemSlot, itemIndex: number, error: unknown): void {
		const uploaded = slot.results.filter((result) => typeof result.hashcode === 'string');
		slot.failure ??= this.failures.output(
			error,
			[itemIndex],
			uploaded.length > 0 ? { uploaded } : {},
			(nodeError) => {
				nodeError.description = [nodeError.description, this.listUploaded()]
					.filter(Boolean)
					.join('\n\n');
			},
		);
	}

	private listUploaded(): string {
		const lines = this.slots.flatMap((slot, itemIndex) =>
			slot.results
				.filter((result) => typeof result.hashcode === 'string' && result.known === undefined)
				.map(
					(result) =>
						`${itemIndex} ${String(result.binaryProperty ?? result.url)} (MD5 ${String(result.md5)}) -> ${String(result.hashcode)}`,
				),
		);
		return lines.length > 0
			? `Already uploaded or looked up in this run (input item, binary field -> hashcode): ${lines.join('; ')}`
			: 'No image of this run was uploaded.';
	}

	async add(itemIndex: number, slot: ItemSlot): Promise<void> {
		const { context } = this;
		const source = context.getNodeParameter('imagesFrom', itemIndex, 'named') as
			| 'all'
			| 'named'
			| 'url';
		const options = context.getNodeParameter('options', itemIndex, {}) as UploadOptions;
		const customer = getCustomerOverride(context, itemIndex);
		const photo =
			source === 'url'
				? {
						url: photoUrlOf(context, itemIndex, context.getNodeParameter('photoUrl', itemIndex)),
						version: String(context.getNodeParameter('photoVersion', itemIndex, '') ?? '').trim(),
						knownVersion: String(options.knownVersion ?? '').trim(),
						bounds: {
							maxBytes: Math.floor(
								positiveOption(
									context,
									itemIndex,
									'Max Photo Size (MB)',
									options.maxPhotoMegabytes ?? DEFAULT_MAX_PHOTO_MEGABYTES,
									0.001,
								) * MEGABYTE,
							),
							timeoutMs:
								positiveOption(
									context,
									itemIndex,
									'Photo Timeout (Seconds)',
									options.photoTimeoutSeconds ?? DEFAULT_PHOTO_TIMEOUT_SECONDS,
									1,
								) * 1000,
							allowance: allowanceFrom(context, itemIndex, options.allowedInternalHosts),
						},
					}
				: undefined;
		const images =
			source === 'url'
				? []
				: selectBinaryImages(
						context,
						itemIndex,
						source,
						source === 'named'
							? (context.getNodeParameter('binaryProperties', itemIndex) as string)
							: '',
					);
		const givenKnown = knownFromItem(context, itemIndex, options);
		const limits = {
			images: Math.floor(
				positiveOption(
					context,
					itemIndex,
					'Images Per Request',
					options.imagesPerRequest ?? DEFAULT_IMAGES_PER_REQUEST,
					1,
				),
			),
			bytes: Math.floor(
				positiveOption(
					context,
					itemIndex,
					'Max Request Size (MB)',
					options.maxRequestMegabytes ?? DEFAULT_MAX_REQUEST_MEGABYTES,
					0.1,
				) * MEGABYTE,
			),
		};
		// Read each image once before anything is sent: an image that cannot be read fails its item
		// alone, instead of breaking a request that carries other items' images.
		for (const image of images) await measureImage(context, itemIndex, image);
		const target: BatchTarget = {
			customer,
			invert: options.invert === true,
			clippingPath: options.clippingPath?.trim() ?? '',
		};
		const targetKey = JSON.stringify(target);
		const known =
			options.rememberKnownImages === false
				? undefined
				: await this.knownImages(itemIndex, target, options);

		if (photo) {
			const fetched = await this.photoOf(itemIndex, targetKey, photo, givenKnown);
			if (!('image' in fetched)) {
				slot.results = [fetched.answer];
				return;
			}
			images.push(fetched.image);
		}
		const skipped = options.skipExisting === true ? { skipped: false } : {};
		slot.results = images.map((image) => ({ ...describeImage(image), ...skipped }));
		const places: ImagePlace[] = images.map((image, position) => ({
			itemIndex,
			image,
			slot,
			position,
			retryKey: [itemIndex, targetKey, image.url ?? image.binaryProperty, image.md5],
			known,
		}));
		const sameImage = (place: ImagePlace) => `${targetKey}\n${place.image.md5 as string}`;
		const open: ImagePlace[] = [];
		for (const place of places) {
			const earlier = uploadedImages.recall(context, place.retryKey);
			if (earlier) {
				slot.results[place.position] = { ...earlier, reused: true };
				this.answered.set(sameImage(place), earlier);
			} else open.push(place);
		}
		const recalled = known
			? await known.recall(open.map((place) => place.image.md5 as string))
			: new Map<string, string>();
		const toSend: Waiting[] = [];
		for (const place of open) {
			const { image, position } = place;
			const key = sameImage(place);
			const answered = this.answered.get(key);
			const sending = this.sending.get(key) ?? toSend.find((waiting) => waiting.sameImage === key);
			const hashcode = recalled.get(image.md5 as string);
			if (givenKnown !== undefined && givenKnown.md5 === image.md5) {
				slot.results[position] = {
					hashcode: givenKnown.hashcode,
					...describeImage(image),
					...(options.skipExisting === true ? { skipped: true } : {}),
					known: 'item',
				};
				this.answered.set(key, slot.results[position]);
			} else if (answered) {
				this.answerAsBefore(place, answered);
			} else if (sending) {
				// Answered with the image sent: a photo's own copy of the bytes is not needed.
				image.data = undefined;
				sending.followers.push(place);
			} else if (hashcode !== undefined) {
				slot.results[position] = {
					hashcode,
					...describeImage(image),
					...(options.skipExisting === true ? { skipped: true } : {}),
					known: true,
				};
				this.answered.set(key, slot.results[position]);
			} else if (options.skipExisting === true && (await this.findExisting(place, target))) {
				this.answered.set(key, slot.results[position]);
			} else {
				toSend.push({ ...place, sameImage: key, followers: [] });
			}
		}
		// A photo answered without a request is let go at once; one sent, once its request is.
		for (const place of places) {
			if (place.image.data !== undefined && this.answered.has(sameImage(place)))
				place.image.data = undefined;
		}
		if (toSend.length === 0) return;

		const batchKey = JSON.stringify([targetKey, limits]);
		const bytes = toSend.reduce((sum, waiting) => sum + (waiting.image.bytes ?? 0), 0);
		if (batchKey !== this.batchKey) {
			await this.flush();
			this.batchKey = batchKey;
			this.target = target;
			this.limits = {
				images: Math.min(limits.images, this.ceiling.images),
				bytes: Math.min(limits.bytes, this.ceiling.bytes),
				narrowInvalid: this.ceiling.narrowInvalid,
			};
		} else if (
			this.waiting.length + toSend.length > (this.limits as BatchLimits).images ||
			this.waitingBytes + bytes > (this.limits as BatchLimits).bytes
		) {
			await this.flush();
		}
		const batchLimits = this.limits as BatchLimits;
		this.waiting.push(...toSend);
		this.waitingBytes += bytes;
		// Claimed only once queued: an item that fails before (a lookup, an earlier request) leaves no
		// later item waiting for an image that no one sends.
		for (const waiting of toSend) this.sending.set(waiting.sameImage, waiting);
		if (this.waiting.length >= batchLimits.images || this.waitingBytes >= batchLimits.bytes)
			await this.flush();
	}

	/**
	 * A photo given by URL: answered from the item's Known Version or the host's "not modified"
	 * without a download, met before in this run (same URL and version) without another, or
	 * fetched and measured.
	 */
	private async photoOf(
		itemIndex: number,
		targetKey: string,
		photo: { url: string; version: string; knownVersion: string; bounds: PhotoBounds },
		givenKnown: { md5: string; hashcode: string } | undefined,
	): Promise<{ image: BinaryImage } | { answer: IDataObject }> {
		const { url, version, knownVersion } = photo;
		const fromItem = (answeredVersion: string) => ({
			answer: {
				hashcode: givenKnown?.hashcode,
				md5: givenKnown?.md5,
				url,
				version: answeredVersion,
				known: 'item',
			},
		});
		if (givenKnown && version !== '' && version === knownVersion) return fromItem(version);
		// The same URL and version met before in this run: no second download, while its bytes or
		// its answer are still there.
		const key = JSON.stringify([targetKey, url, version]);
		const met = this.photos.get(key);
		if (met && (met.data !== undefined || this.answered.has(`${targetKey}\n${met.md5 as string}`)))
			return { image: { ...met } };
		const fetched = await fetchPhoto(
			this.context,
			itemIndex,
			url,
			version,
			givenKnown ? knownVersion : '',
			photo.bounds,
		);
		if ('notModified' in fetched) return fromItem(knownVersion);
		await measureImage(this.context, itemIndex, fetched.image);
		this.photos.set(key, fetched.image);
		return fetched;
	}

	/** An image met before in this run: the first one's result, for this item's own field. */
	private answerAsBefore(place: ImagePlace, result: IDataObject): void {
		const { hashcode, warning } = result;
		place.slot.results[place.position] = {
			...(hashcode !== undefined ? { hashcode } : {}),
			...place.slot.results[place.position],
			...(warning !== undefined ? { warning } : {}),
			...(result.known !== undefined ? { known: result.known } : {}),
			...(result.skipped !== undefined ? { skipped: result.skipped } : {}),
		};
		if (typeof hashcode === 'string')
			uploadedImages.remember(this.context, place.retryKey, place.slot.results[place.position]);
	}

	/** Uploads what waits; results go to their items (and the same images of later items), failures fail them. */
	async flush(): Promise<void> {
		const waiting = this.waiting;
		const target = this.target;
		const limits = this.limits;
		this.waiting = [];
		this.waitingBytes = 0;
		if (waiting.length === 0 || !target || !limits) return;
		const asked = { ...limits };
		const outcomes = await uploadInBatches(this.context, waiting, target, limits);
		// What the service refused binds the rest of the run, whatever limits later items ask for.
		if (limits.images < asked.images) this.ceiling.images = limits.images;
		if (limits.bytes < asked.bytes) this.ceiling.bytes = limits.bytes;
		this.ceiling.narrowInvalid &&= limits.narrowInvalid;
		const learnt = new Map<KnownImages, Array<{ md5: string; hashcode: string }>>();
		const failed: Array<[ImagePlace, unknown]> = [];
		outcomes.forEach((outcome, n) => {
			const entry = waiting[n];
			this.sending.delete(entry.sameImage);
			const places = [entry, ...entry.followers];
			for (const place of places) place.image.data = undefined;
			if ('error' in outcome) {
				for (const place of places) failed.push([place, outcome.error]);
				return;
			}
			const result = { ...entry.slot.results[entry.position], ...outcome.result };
			entry.slot.results[entry.position] = result;
			// Only a result with a hashcode is kept: an answer this node cannot read may be as long as
			// the service makes it, and sending the image again gets its hashcode.
			if (typeof result.hashcode !== 'string') {
				for (const follower of entry.followers) this.answerAsBefore(follower, result);
				return;
			}
			this.answered.set(entry.sameImage, result);
			uploadedImages.remember(this.context, entry.retryKey, result);
			for (const follower of entry.followers) this.answerAsBefore(follower, result);
			if (result.warning !== undefined) return;
			for (const place of places) {
				if (!place.known) continue;
				const entries = learnt.get(place.known) ?? [];
				entries.push({ md5: place.image.md5 as string, hashcode: result.hashcode });
				learnt.set(place.known, entries);
			}
		});
		// What was stored is remembered before a failure may stop the run.
		for (const [known, entries] of learnt) await known.remember(entries);
		for (const [place, error] of failed) this.fail(place.slot, place.itemIndex, error);
	}

	private async knownImages(
		itemIndex: number,
		target: BatchTarget,
		options: UploadOptions,
	): Promise<KnownImages> {
		const lookUpAgainAfterDays = options.lookUpAgainAfterDays ?? DEFAULT_LOOK_UP_AGAIN_DAYS;
		const key = JSON.stringify([target.customer ?? null, lookUpAgainAfterDays]);
		let known = this.known.get(key);
		if (!known) {
			known = await knownImagesOf(this.context, itemIndex, target.customer, lookUpAgainAfterDays);
			this.known.set(key, known);
		}
		return known;
	}

	/** Skip Existing: whether the service has the image (its result is then set). */
	private async findExisting(place: ImagePlace, target: BatchTarget): Promise<boolean> {
		const { itemIndex, image, slot, position, known } = place;
		const lookup = await lookUpImage(
			this.context,
			itemIndex,
			{ md5: image.md5 as string },
			target.customer,
		);
		if (!lookup.found) return false;
		if ('hashcode' in lookup) {
			slot.results[position] = {
				hashcode: lookup.hashcode,
				...describeImage(image),
				skipped: true,
			};
			await known?.remember([{ md5: image.md5 as string, hashcode: lookup.hashcode }]);
		} else {
			slot.results[position] = {
				...describeImage(image),
				skipped: true,
				warning: UNREADABLE_FIND_ANSWER,
				raw: lookup.raw,
			};
		}
		return true;
	}
}
