import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { ExecutionMemory } from '../../../shared/executionMemory';
import { getCustomerOverride } from '../../../shared/customer';
import type { ItemFailures } from '../itemErrors';
import { measureImage, selectBinaryImages, type BinaryImage } from './binaryImages';
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
}

/** One input item on its way: its images' results as they come, or the output item of its failure. */
interface ItemSlot {
	results: IDataObject[];
	failure?: INodeExecutionData;
}

interface Waiting extends PendingImage {
	slot: ItemSlot;
	position: number;
	/** Its key in the execution's memory of what was sent (Retry On Fail). */
	retryKey: unknown[];
}

/**
 * Retry On Fail runs the node again with all items, in the same process: an image that reached the
 * service on an earlier try of this execution is answered from here instead of being sent again.
 */
const uploadedImages = new ExecutionMemory<IDataObject>();

/**
 * Image Upload for all items of a run: images the account is known to have cost no request, the
 * others go in requests shared by consecutive items (same customer and processing), in order. An
 * item fails alone when its images cannot be read; a failed request fails the items of its images.
 */
export async function uploadItems(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
): Promise<INodeExecutionData[]> {
	const run = new UploadRun(context, failures);
	const slots: ItemSlot[] = [];
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

class UploadRun {
	private limits: BatchLimits | undefined;

	private waiting: Waiting[] = [];

	private waitingBytes = 0;

	private target: BatchTarget | undefined;

	private targetKey = '';

	private readonly known = new Map<string, KnownImages>();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly failures: ItemFailures,
	) {}

	/**
	 * Marks the item failed; without Continue On Fail the run stops here. Its images that reached the
	 * service in an earlier request stay in its output, so no hashcode is lost.
	 */
	fail(slot: ItemSlot, itemIndex: number, error: unknown): void {
		const uploaded = slot.results.filter((result) => typeof result.hashcode === 'string');
		slot.failure ??= this.failures.output(
			error,
			[itemIndex],
			uploaded.length > 0 ? { uploaded } : {},
		);
	}

	async add(itemIndex: number, slot: ItemSlot): Promise<void> {
		const { context } = this;
		const source = context.getNodeParameter('imagesFrom', itemIndex, 'named') as 'all' | 'named';
		const names =
			source === 'named' ? (context.getNodeParameter('binaryProperties', itemIndex) as string) : '';
		const options = context.getNodeParameter('options', itemIndex, {}) as UploadOptions;
		const customer = getCustomerOverride(context, itemIndex);
		const images = selectBinaryImages(context, itemIndex, source, names);
		// Read each image once before anything is sent: an image that cannot be read fails its item
		// alone, instead of breaking a request that carries other items' images.
		for (const image of images) await measureImage(context, itemIndex, image);
		this.limits ??= {
			images: Math.max(1, Math.floor(options.imagesPerRequest ?? DEFAULT_IMAGES_PER_REQUEST)),
			bytes: Math.max(
				1,
				Math.floor((options.maxRequestMegabytes ?? DEFAULT_MAX_REQUEST_MEGABYTES) * MEGABYTE),
			),
		};
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

		const skipped = options.skipExisting === true ? { skipped: false } : {};
		slot.results = images.map((image) => ({ ...describeImage(image), ...skipped }));
		const retryKeys = images.map((image) => [
			itemIndex,
			targetKey,
			image.binaryProperty,
			image.md5,
		]);
		const open: number[] = [];
		retryKeys.forEach((retryKey, position) => {
			const earlier = uploadedImages.recall(this.context, retryKey);
			if (earlier) slot.results[position] = { ...earlier, reused: true };
			else open.push(position);
		});
		const recalled = known
			? await known.recall(open.map((position) => images[position].md5 as string))
			: new Map<string, string>();
		const toSend: number[] = [];
		for (const position of open) {
			const image = images[position];
			const hashcode = recalled.get(image.md5 as string);
			if (hashcode !== undefined) {
				slot.results[position] = {
					hashcode,
					...describeImage(image),
					...(options.skipExisting === true ? { skipped: true } : {}),
					known: true,
				};
			} else if (
				options.skipExisting === true &&
				(await this.findExisting(itemIndex, image, target, known, slot.results, position))
			) {
				continue;
			} else {
				toSend.push(position);
			}
		}
		if (toSend.length === 0) return;

		const bytes = toSend.reduce((sum, position) => sum + (images[position].bytes ?? 0), 0);
		const full =
			this.waiting.length + toSend.length > this.limits.images ||
			this.waitingBytes + bytes > this.limits.bytes;
		if (targetKey !== this.targetKey || full) await this.flush();
		this.target = target;
		this.targetKey = targetKey;
		for (const position of toSend) {
			this.waiting.push({
				itemIndex,
				image: images[position],
				slot,
				position,
				retryKey: retryKeys[position],
			});
		}
		this.waitingBytes += bytes;
		if (this.waiting.length >= this.limits.images || this.waitingBytes >= this.limits.bytes)
			await this.flush();
	}

	/** Uploads what waits; results go to their items, failures fail them. */
	async flush(): Promise<void> {
		const waiting = this.waiting;
		const target = this.target;
		this.waiting = [];
		this.waitingBytes = 0;
		if (waiting.length === 0 || !target || !this.limits) return;
		const outcomes = await uploadInBatches(this.context, waiting, target, this.limits);
		const learnt: Array<{ md5: string; hashcode: string }> = [];
		const failed: Array<[Waiting, unknown]> = [];
		outcomes.forEach((outcome, n) => {
			const entry = waiting[n];
			if ('error' in outcome) {
				failed.push([entry, outcome.error]);
				return;
			}
			const result = { ...entry.slot.results[entry.position], ...outcome.result };
			entry.slot.results[entry.position] = result;
			// Only a result with a hashcode is kept: an answer this node cannot read may be as long as
			// the service makes it, and sending the image again gets its hashcode.
			if (typeof result.hashcode === 'string')
				uploadedImages.remember(this.context, entry.retryKey, result);
			if (typeof result.hashcode === 'string' && result.warning === undefined)
				learnt.push({ md5: entry.image.md5 as string, hashcode: result.hashcode });
		});
		// What was stored is remembered before a failure may stop the run.
		await this.knownFor(target)?.remember(learnt);
		for (const [entry, error] of failed) this.fail(entry.slot, entry.itemIndex, error);
	}

	private knownFor(target: BatchTarget): KnownImages | undefined {
		return this.known.get(JSON.stringify(target.customer ?? null));
	}

	private async knownImages(
		itemIndex: number,
		target: BatchTarget,
		options: UploadOptions,
	): Promise<KnownImages> {
		const key = JSON.stringify(target.customer ?? null);
		let known = this.known.get(key);
		if (!known) {
			known = await knownImagesOf(
				this.context,
				itemIndex,
				target.customer,
				options.lookUpAgainAfterDays ?? DEFAULT_LOOK_UP_AGAIN_DAYS,
			);
			this.known.set(key, known);
		}
		return known;
	}

	/** Skip Existing: whether the service has the image (its result is then set). */
	private async findExisting(
		itemIndex: number,
		image: BinaryImage,
		target: BatchTarget,
		known: KnownImages | undefined,
		results: IDataObject[],
		position: number,
	): Promise<boolean> {
		const lookup = await lookUpImage(
			this.context,
			itemIndex,
			{ md5: image.md5 as string },
			target.customer,
		);
		if (!lookup.found) return false;
		if ('hashcode' in lookup) {
			results[position] = { hashcode: lookup.hashcode, ...describeImage(image), skipped: true };
			await known?.remember([{ md5: image.md5 as string, hashcode: lookup.hashcode }]);
		} else {
			results[position] = {
				...describeImage(image),
				skipped: true,
				warning: UNREADABLE_FIND_ANSWER,
				raw: lookup.raw,
			};
		}
		return true;
	}
}
