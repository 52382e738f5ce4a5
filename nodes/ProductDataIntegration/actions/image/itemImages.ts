import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { cancelSignal, cleanServiceText } from '../../../shared/transport';
import type { RunParameters } from '../runParameters';
import { measureImage, selectBinaryImages, type BinaryImage } from './binaryImages';
import type { ImageAnswers } from './imageAnswers';
import { imageSignature } from './imageSignature';
import { fetchPhoto } from './photos';
import type { RequestQueue } from './requestQueue';
import {
	uploadSettings,
	type GivenKnown,
	type PhotoSettings,
	type UploadSettings,
} from './uploadSettings';

type PhotoFetch = Awaited<ReturnType<typeof fetchPhoto>>;

/** An item's images, measured; or, for a photo known without a download, its answer. */
export type ItemImages = { images: BinaryImage[] } | { answer: IDataObject };

/** A photo's fetch, and the bytes it brought that no item has taken yet. */
interface Fetching {
	fetch: Promise<PhotoFetch>;
	/** Counted in the run's arrived bytes until the photo is taken or its item needs it no longer. */
	heldBytes: number;
	/** Taken or let go: its bytes are counted no longer, nor when it arrives after that. */
	released: boolean;
}

/**
 * The images of the items of one run: binary fields read, photos fetched at most once per run. It
 * alone fetches photos ahead of their items' turns, so it reads the settings of the items ahead too.
 */
export class RunImages {
	/** Settings of later items read ahead to fetch their photos, or why they could not be. */
	private readonly settingsAhead = new Map<number, UploadSettings | { error: unknown }>();

	/** The next item whose photo may be fetched ahead. */
	private nextAhead = 0;

	/** The item whose settings bound fetching ahead; none once the run ends or for binary fields. */
	private aheadOf: UploadSettings | undefined;

	/** Photos fetched in this run, by target, URL and version. */
	private readonly photos = new Map<string, BinaryImage>();

	/** Photos the host said are not modified since a known version, by URL, version and known version. */
	private readonly notModified = new Set<string>();

	/** Fetches started ahead of their item's turn, by URL and version: one at a time for each. */
	private readonly ahead = new Map<
		string,
		{ itemIndex: number; key: string; fetching: Fetching }
	>();

	/** The photo the item at its turn took, until its item is queued: let go if the item fails first. */
	private taken: { itemIndex: number; image: BinaryImage } | undefined;

	/** Ends every fetch of the run: aborted when the run takes no more photos. */
	private readonly runEnd = new AbortController();

	/** The run's end or the execution's cancellation, whichever comes first. */
	private readonly runEnded: AbortSignal;

	/** Photos on their way from their host. */
	private inFlight = 0;

	/** Bytes of photos that have come and that no item has taken yet. */
	private arrivedBytes = 0;

	private largestPhoto = 0;

	/** Whether the host has answered a fetch of this run (a photo or "not modified"). */
	private hostAnswered = false;

	/**
	 * @param answers whether the run has the answer to an image, so that a photo met again needs
	 * neither its bytes nor a download.
	 * @param queue the bytes waiting for their request, which photos fetched ahead leave room for.
	 */
	constructor(
		private readonly context: IExecuteFunctions,
		private readonly parameters: RunParameters,
		private readonly itemCount: number,
		private readonly answers: Pick<ImageAnswers, 'hasAnswer'>,
		private readonly queue: Pick<RequestQueue, 'waitingBytes'>,
	) {
		const cancelled = cancelSignal(context);
		this.runEnded = cancelled
			? AbortSignal.any([this.runEnd.signal, cancelled])
			: this.runEnd.signal;
	}

	/**
	 * No item takes a photo any more: nothing more is fetched, and those still on their way are not
	 * waited for, their connections closed.
	 */
	end(): void {
		this.aheadOf = undefined;
		this.nextAhead = this.itemCount;
		this.runEnd.abort();
	}

	/** The item's settings, read ahead for its photo or now; an item's settings are read once. */
	settingsOf(itemIndex: number): UploadSettings {
		const read = this.settingsAhead.get(itemIndex) ?? this.readSettings(itemIndex);
		this.settingsAhead.delete(itemIndex);
		if ('error' in read) throw read.error;
		return read;
	}

	private readSettings(itemIndex: number): UploadSettings | { error: unknown } {
		try {
			return uploadSettings(this.context, this.parameters, itemIndex);
		} catch (error) {
			return { error };
		}
	}

	/**
	 * At an item's turn: its photo, and those of the next items while it waits, at most Photos At
	 * Once on their way, and no more fetched and not yet sent than Max Request Size.
	 */
	fetchAhead(settings: UploadSettings): void {
		this.aheadOf = settings.photo ? settings : undefined;
		if (!settings.photo) return;
		this.startAhead(settings);
		this.nextAhead = Math.max(this.nextAhead, settings.itemIndex + 1);
		this.fetchMore();
	}

	/** Asked again whenever a photo arrives, so that Photos At Once stay on their way. */
	private fetchMore(): void {
		const settings = this.aheadOf;
		if (!settings?.photo) return;
		while (
			this.nextAhead < this.itemCount &&
			this.fetching < settings.photo.atOnce &&
			this.hasRoom(settings.limits.bytes - this.queue.waitingBytes)
		) {
			const next = this.readSettings(this.nextAhead);
			this.settingsAhead.set(this.nextAhead++, next);
			if (!('error' in next)) this.startAhead(next);
		}
	}

	async of(settings: UploadSettings): Promise<ItemImages> {
		const { context } = this;
		const { itemIndex, source, photo } = settings;
		if (source === 'url' && photo) return await this.photoOf(settings, photo);
		const images = selectBinaryImages(
			context,
			itemIndex,
			source === 'all' ? 'all' : 'named',
			settings.binaryProperties,
		);
		// Read each image once before anything is sent: an image that cannot be read fails its item
		// alone, instead of breaking a request that carries other items' images.
		for (const image of images) await measureImage(context, itemIndex, image);
		return { images };
	}

	/**
	 * A photo given by URL: answered from the item's Known Version or the host's "not modified"
	 * without a download, met before in this run (same URL and version) without another, or
	 * fetched (perhaps ahead of its turn) and measured.
	 */
	private async photoOf(settings: UploadSettings, photo: PhotoSettings): Promise<ItemImages> {
		const { itemIndex, givenKnown } = settings;
		const { url, version, knownVersion } = photo;
		const answer = this.answerWithoutFetch(settings, photo);
		if (answer) {
			this.forget(itemIndex);
			return answer;
		}
		const photoKey = JSON.stringify([url, version]);
		try {
			const fetched = await this.take(settings, photo);
			if ('notModified' in fetched) {
				this.notModified.add(JSON.stringify([url, version, knownVersion]));
				return knownPhoto(url, knownVersion, givenKnown);
			}
			this.checkIsImage(itemIndex, fetched.image);
			await measureImage(this.context, itemIndex, fetched.image);
			this.photos.set(JSON.stringify([settings.targetKey, url, version]), fetched.image);
			this.taken = { itemIndex, image: fetched.image };
			return { images: [fetched.image] };
		} finally {
			// Kept until the run knows the photo's outcome: no item fetches it again meanwhile.
			if (this.ahead.get(photoKey)?.key === fetchKey(settings, photo)) this.ahead.delete(photoKey);
		}
	}

	/** The photo's answer or image when the run needs no fetch for it. */
	private answerWithoutFetch(
		settings: UploadSettings,
		photo: PhotoSettings,
	): ItemImages | undefined {
		const { targetKey, givenKnown } = settings;
		const { url, version, knownVersion } = photo;
		if (givenKnown && version !== '' && version === knownVersion)
			return knownPhoto(url, version, givenKnown);
		// The same URL and version met before in this run: no second download, while its bytes or
		// its answer are still there.
		const met = this.photos.get(JSON.stringify([targetKey, url, version]));
		if (
			met &&
			(met.data !== undefined || this.answers.hasAnswer(`${targetKey}\n${met.md5 as string}`))
		)
			return { images: [{ ...met }] };
		if (givenKnown && this.notModified.has(JSON.stringify([url, version, knownVersion])))
			return knownPhoto(url, knownVersion, givenKnown);
		return undefined;
	}

	/**
	 * Whether one more photo may be fetched ahead, with `room` bytes left for photos fetched and not
	 * yet sent: those on their way are reckoned at the largest photo of the run so far, and before
	 * the host's first answer only one is fetched. A night of "not modified" alone brings no photo,
	 * and its revalidations go side by side too.
	 */
	hasRoom(room: number): boolean {
		if (!this.hostAnswered) return this.inFlight === 0;
		return this.arrivedBytes + (this.inFlight + 1) * this.largestPhoto <= room;
	}

	/** How many photos are on their way. */
	get fetching(): number {
		return this.inFlight;
	}

	/** Starts fetching an item's photo ahead of its turn, when its turn will need one. */
	private startAhead(settings: UploadSettings): void {
		const { photo, itemIndex } = settings;
		if (!photo || this.answerWithoutFetch(settings, photo)) return;
		const photoKey = JSON.stringify([photo.url, photo.version]);
		if (this.ahead.has(photoKey)) return;
		const key = fetchKey(settings, photo);
		this.ahead.set(photoKey, { itemIndex, key, fetching: this.startFetch(settings, photo) });
	}

	/**
	 * An item that needs its photo no longer (failed, or answered after all): the bytes it took and
	 * has not queued, and those fetched ahead for it, are let go at once, so that fetching ahead
	 * goes on.
	 */
	forget(itemIndex: number): void {
		if (this.taken?.itemIndex === itemIndex) {
			this.letGo([this.taken.image]);
			this.taken = undefined;
		}
		for (const [photoKey, started] of this.ahead) {
			if (started.itemIndex !== itemIndex) continue;
			this.ahead.delete(photoKey);
			this.release(started.fetching);
		}
	}

	/**
	 * Lets go the bytes of photos no request will carry (any more): the one place a photo's bytes are
	 * dropped, whether its item was answered without them, sent them, or failed.
	 */
	letGo(images: Iterable<BinaryImage>): void {
		for (const image of images) image.data = undefined;
	}

	/** The item's fetch, started ahead or now; one another item started is used only if it succeeded. */
	private async take(settings: UploadSettings, photo: PhotoSettings): Promise<PhotoFetch> {
		const photoKey = JSON.stringify([photo.url, photo.version]);
		const ahead = this.ahead.get(photoKey);
		// Started for another item asking the host otherwise (with or without a known version).
		const started = ahead?.key === fetchKey(settings, photo) ? ahead : undefined;
		if (started?.itemIndex === settings.itemIndex) return await this.claim(started.fetching);
		if (started) {
			try {
				return await this.claim(started.fetching);
			} catch {
				// A failure is told by the item whose fetch it was, naming it.
			}
		}
		return await this.claim(this.startFetch(settings, photo));
	}

	/** The fetch's outcome, its bytes no longer waiting for an item once it has come. */
	private async claim(fetching: Fetching): Promise<PhotoFetch> {
		try {
			return await fetching.fetch;
		} finally {
			this.release(fetching);
		}
	}

	private release(fetching: Fetching): void {
		fetching.released = true;
		this.arrivedBytes -= fetching.heldBytes;
		fetching.heldBytes = 0;
	}

	private startFetch(settings: UploadSettings, photo: PhotoSettings): Fetching {
		this.inFlight++;
		const fetch = fetchPhoto(
			this.context,
			settings.itemIndex,
			photo.url,
			photo.version,
			settings.givenKnown ? photo.knownVersion : '',
			photo.bounds,
			this.runEnded,
		)
			.then((fetched) => {
				const bytes = 'image' in fetched ? (fetched.image.data?.length ?? 0) : 0;
				if (!fetching.released) {
					fetching.heldBytes = bytes;
					this.arrivedBytes += bytes;
				}
				this.largestPhoto = Math.max(this.largestPhoto, bytes);
				this.hostAnswered = true;
				return fetched;
			})
			// A failed photo frees its place too: the next one is asked for at once.
			.finally(() => {
				this.inFlight--;
				this.fetchMore();
			});
		// Its item hears of a failure at its turn; until then it is not an unhandled rejection.
		fetch.catch(() => undefined);
		const fetching: Fetching = { fetch, heldBytes: 0, released: false };
		return fetching;
	}

	/** A body that is not an image fails its item here, before it costs an image request. */
	private checkIsImage(itemIndex: number, photo: BinaryImage): void {
		const signature = imageSignature(photo.data as Buffer);
		if ('image' in signature) return;
		const saidType = photo.mimeType === 'application/octet-stream' ? '' : ` as ${photo.mimeType}`;
		throw new NodeOperationError(
			this.context.getNode(),
			`The Photo URL of item ${itemIndex} is not an image: ${cleanServiceText(photo.url ?? '', 200)} sent ${signature.notImage}${saidType}`,
			{
				itemIndex,
				description:
					'Nothing was uploaded. A shop often answers a missing photo with a page of its own: check that the photo is still at its URL.',
			},
		);
	}
}

/** What a fetch asks the host: the same for items giving the same URL, version and bounds. */
function fetchKey(settings: UploadSettings, photo: PhotoSettings): string {
	const conditional = settings.givenKnown ? photo.knownVersion : '';
	return JSON.stringify([photo.url, photo.version, conditional, photo.bounds]);
}

function knownPhoto(url: string, version: string, givenKnown: GivenKnown | undefined): ItemImages {
	return {
		answer: {
			hashcode: givenKnown?.hashcode,
			md5: givenKnown?.md5,
			url,
			version,
			known: 'item',
		},
	};
}
