import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { ExecutionMemory } from '../../../shared/executionMemory';
import type { KnownImages } from '../../../shared/knownImages';
import type { BinaryImage } from './binaryImages';
import { describeImage, type PendingImage } from './imageBatches';
import { lookUpImage, UNREADABLE_FIND_ANSWER } from './lookup';
import type { OutputPlace, Outputs } from './outputs';
import type { UploadSettings } from './uploadSettings';

/** One image of an input item, where its result goes. */
export interface ImagePlace extends PendingImage {
	/** Its place among the images of its item, and in the item's output. */
	position: number;
	/** Its key among the images of the run: the same bytes for the same target. */
	sameImage: string;
	/** Its key in the execution's memory of what was sent (Retry On Fail). */
	retryKey: unknown[];
	/** Where its item remembers what it learns; none with Remember Known Images off. */
	known: KnownImages | undefined;
}

/** An image to send, with the later images of the run that are the same. */
export interface Waiting extends ImagePlace {
	followers: ImagePlace[];
}

/**
 * Retry On Fail runs the node again with all items, in the same process: an image that reached the
 * service on an earlier try of this execution is answered from here instead of being sent again.
 */
const uploadedImages = new ExecutionMemory<IDataObject>();

/**
 * Whether an image needs a request, decided in one place: each source of an answer, in the order
 * they are asked, answers the image's place or leaves it to the next; what none answers is sent.
 */
export class ImageAnswers {
	/** Results of images this run has a hashcode for, by target and md5. */
	private readonly answered = new Map<string, IDataObject>();

	/** Images waiting in the request queue, by target and md5: the same image of a later item waits with them. */
	private readonly sending = new Map<string, Waiting>();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly outputs: Outputs,
	) {}

	/** Whether the run has the result of an image (target and md5). */
	hasAnswer(sameImage: string): boolean {
		return this.answered.has(sameImage);
	}

	/** The places of an item's images, each result started with what is known of the image. */
	placesOf(
		settings: UploadSettings,
		images: BinaryImage[],
		known: KnownImages | undefined,
	): ImagePlace[] {
		const { itemIndex, targetKey } = settings;
		const skipped = settings.skipExisting ? { skipped: false } : {};
		return images.map((image, position) => {
			this.answer({ itemIndex, position }, { ...describeImage(image), ...skipped });
			return {
				itemIndex,
				image,
				position,
				sameImage: `${targetKey}\n${image.md5 as string}`,
				retryKey: [itemIndex, targetKey, image.url ?? image.binaryProperty, image.md5],
				known,
			};
		});
	}

	/** The images of an item that need a request; the others get their results here. */
	async toSend(settings: UploadSettings, places: ImagePlace[]): Promise<Waiting[]> {
		const open = places.filter((place) => !this.fromRetry(place));
		const known = places[0]?.known;
		const recalled = known
			? await known.recall(open.map((place) => place.image.md5 as string))
			: new Map<string, string>();
		const toSend: Waiting[] = [];
		for (const place of open) {
			if (
				this.fromItem(place, settings) ||
				this.fromRun(place, toSend) ||
				this.fromMemory(place, settings, recalled) ||
				(settings.skipExisting && (await this.fromSkipExisting(place, settings)))
			)
				continue;
			toSend.push({ ...place, followers: [] });
		}
		return toSend;
	}

	/** Images that joined the request queue: the same image of a later item waits for their answer. */
	queued(toSend: Waiting[]): void {
		for (const waiting of toSend) this.sending.set(waiting.sameImage, waiting);
	}

	/** A queued image whose request failed: a later item meeting it sends it again. */
	notSent(entry: Waiting): void {
		this.sending.delete(entry.sameImage);
	}

	/** Retry On Fail: the image reached the service on an earlier try of this execution. */
	private fromRetry(place: ImagePlace): boolean {
		const earlier = uploadedImages.recall(this.context, place.retryKey);
		if (!earlier) return false;
		this.answer(place, { ...earlier, reused: true });
		this.answered.set(place.sameImage, earlier);
		return true;
	}

	/** The item's Known MD5 and Known Hashcode. */
	private fromItem(place: ImagePlace, settings: UploadSettings): boolean {
		const { givenKnown } = settings;
		if (givenKnown === undefined || givenKnown.md5 !== place.image.md5) return false;
		this.answerKnown(place, settings, givenKnown.hashcode, 'item');
		return true;
	}

	/** The same image met before in this run: answered, or waiting to be sent with the first one. */
	private fromRun(place: ImagePlace, toSend: Waiting[]): boolean {
		const answered = this.answered.get(place.sameImage);
		if (answered) {
			this.answerAsBefore(place, answered);
			return true;
		}
		const sending =
			this.sending.get(place.sameImage) ??
			toSend.find((waiting) => waiting.sameImage === place.sameImage);
		if (!sending) return false;
		sending.followers.push(place);
		return true;
	}

	/** Remember Known Images: the account's known images. */
	private fromMemory(
		place: ImagePlace,
		settings: UploadSettings,
		recalled: Map<string, string>,
	): boolean {
		const hashcode = recalled.get(place.image.md5 as string);
		if (hashcode === undefined) return false;
		this.answerKnown(place, settings, hashcode, true);
		return true;
	}

	/** Skip Existing: the service has the image (looked up by its MD5). */
	private async fromSkipExisting(place: ImagePlace, settings: UploadSettings): Promise<boolean> {
		const { itemIndex, image, known } = place;
		const md5 = image.md5 as string;
		const lookup = await lookUpImage(this.context, itemIndex, { md5 }, settings.target.customer);
		if (!lookup.found) return false;
		let result: IDataObject;
		if ('hashcode' in lookup) {
			result = this.answer(place, {
				hashcode: lookup.hashcode,
				...describeImage(image),
				skipped: true,
			});
			await known?.remember([{ md5, hashcode: lookup.hashcode }]);
		} else {
			result = this.answer(place, {
				...describeImage(image),
				skipped: true,
				warning: UNREADABLE_FIND_ANSWER,
				raw: lookup.raw,
			});
		}
		this.answered.set(place.sameImage, result);
		return true;
	}

	private answerKnown(
		place: ImagePlace,
		settings: UploadSettings,
		hashcode: string,
		known: 'item' | true,
	): void {
		const result = this.answer(place, {
			hashcode,
			...describeImage(place.image),
			...(settings.skipExisting ? { skipped: true } : {}),
			known,
		});
		this.answered.set(place.sameImage, result);
	}

	/**
	 * The service's answer to an image sent, over what its place held: for it and the same images of
	 * later items.
	 */
	sent(entry: Waiting, answer: IDataObject): IDataObject {
		this.sending.delete(entry.sameImage);
		const result = this.answer(entry, { ...this.outputs.resultAt(entry), ...answer });
		// Only a result with a hashcode is kept: an answer this node cannot read may be as long as
		// the service makes it, and sending the image again gets its hashcode.
		if (typeof result.hashcode === 'string') {
			this.answered.set(entry.sameImage, result);
			uploadedImages.remember(this.context, entry.retryKey, result);
		}
		for (const follower of entry.followers) this.answerAsBefore(follower, result);
		return result;
	}

	/** An image met before in this run: the first one's result, for this item's own field. */
	private answerAsBefore(place: ImagePlace, result: IDataObject): void {
		const { hashcode, warning } = result;
		const own = this.answer(place, {
			...(hashcode !== undefined ? { hashcode } : {}),
			...this.outputs.resultAt(place),
			...(warning !== undefined ? { warning } : {}),
			...(result.known !== undefined ? { known: result.known } : {}),
			...(result.skipped !== undefined ? { skipped: result.skipped } : {}),
		});
		if (typeof hashcode === 'string') uploadedImages.remember(this.context, place.retryKey, own);
	}

	/** The image's result in its item's output. */
	private answer(place: OutputPlace, result: IDataObject): IDataObject {
		this.outputs.write(place.itemIndex, { position: place.position, result });
		return result;
	}
}
