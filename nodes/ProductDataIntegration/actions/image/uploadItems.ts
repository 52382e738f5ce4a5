import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { knownImagesOf, type KnownImages } from '../../../shared/knownImages';
import type { ItemFailures } from '../itemErrors';
import { RunParameters } from '../runParameters';
import {
	ImageAnswers,
	placesOf,
	type ImagePlace,
	type ItemSlot,
	type Waiting,
} from './imageAnswers';
import { uploadInBatches, type BatchLimits, type BatchTarget } from './imageBatches';
import { RunImages } from './itemImages';
import { uploadSettings, type UploadSettings } from './uploadSettings';

/** No limit learnt from the service yet. */
const NO_CEILING = { images: Infinity, bytes: Infinity };

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
	const run = new UploadRun(context, failures, slots, items.length);
	try {
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			const slot: ItemSlot = { results: [] };
			slots.push(slot);
			try {
				await run.add(itemIndex, slot);
			} catch (error) {
				run.fail(slot, itemIndex, error);
			}
		}
	} finally {
		// Whether every item had its turn or a failure stopped the run, the photos still fetched
		// ahead are for no item.
		run.stopFetchingAhead();
	}
	await run.flush();
	return slots.flatMap((slot, itemIndex) =>
		slot.failure
			? [slot.failure]
			: slot.results.map((json) => ({ json, pairedItem: { item: itemIndex } })),
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

	private readonly parameters: RunParameters;

	private readonly answers: ImageAnswers;

	private readonly images: RunImages;

	/** Settings of later items read ahead to fetch their photos, or why they could not be. */
	private readonly settingsAhead = new Map<number, UploadSettings | { error: unknown }>();

	/** The next item whose photo may be fetched ahead. */
	private nextAhead = 0;

	/** The item whose settings bound fetching ahead; none once the run ends or for binary fields. */
	private aheadOf: UploadSettings | undefined;

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly failures: ItemFailures,
		private readonly slots: ItemSlot[],
		private readonly itemCount: number,
	) {
		this.parameters = new RunParameters(context);
		this.answers = new ImageAnswers(context);
		this.images = new RunImages(
			context,
			(sameImage) => this.answers.answered.has(sameImage),
			() => this.fetchMore(),
		);
	}

	/**
	 * Marks the item failed; without Continue On Fail the run stops here, and its error lists the
	 * hashcodes the run got from the service, so that none is lost. Its images that reached the
	 * service in an earlier request stay in its output.
	 */
	fail(slot: ItemSlot, itemIndex: number, error: unknown): void {
		this.images.forget(itemIndex);
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

	/** One item: its settings, its images, the answers the run has for them, the rest queued. */
	async add(itemIndex: number, slot: ItemSlot): Promise<void> {
		const settings = this.settingsOf(itemIndex);
		this.fetchAhead(settings);
		const known = settings.rememberKnownImages ? await this.knownImages(settings) : undefined;
		const images = await this.images.of(settings);
		if ('answer' in images) {
			slot.results = [images.answer];
			return;
		}
		const places = placesOf(settings, images.images, slot, known);
		const toSend = await this.answers.toSend(settings, places);
		if (toSend.length > 0) await this.queue(settings, toSend);
	}

	/** No item takes a photo any more: nothing more is fetched, and what is on its way is ended. */
	stopFetchingAhead(): void {
		this.aheadOf = undefined;
		this.nextAhead = this.itemCount;
		this.images.end();
	}

	private settingsOf(itemIndex: number): UploadSettings {
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
	 * The item's photo, and those of the next items while it waits: at most Photos At Once on
	 * their way, and no more fetched and not yet sent than Max Request Size.
	 */
	private fetchAhead(settings: UploadSettings): void {
		this.aheadOf = settings.photo ? settings : undefined;
		if (!settings.photo) return;
		this.images.fetchAhead(settings);
		this.nextAhead = Math.max(this.nextAhead, settings.itemIndex + 1);
		this.fetchMore();
	}

	/** Called again whenever a photo arrives, so that Photos At Once stay on their way. */
	private fetchMore(): void {
		const settings = this.aheadOf;
		if (!settings?.photo) return;
		while (
			this.nextAhead < this.itemCount &&
			this.images.fetching < settings.photo.atOnce &&
			this.images.hasRoom(settings.limits.bytes - this.waitingBytes)
		) {
			const next = this.readSettings(this.nextAhead);
			this.settingsAhead.set(this.nextAhead++, next);
			if (!('error' in next)) this.images.fetchAhead(next);
		}
	}

	/** Images to send join the request being filled, or start the next one. */
	private async queue(settings: UploadSettings, toSend: Waiting[]): Promise<void> {
		const { limits } = settings;
		const batchKey = JSON.stringify([settings.targetKey, limits]);
		const bytes = toSend.reduce((sum, waiting) => sum + (waiting.image.bytes ?? 0), 0);
		if (batchKey !== this.batchKey) {
			await this.flush();
			this.batchKey = batchKey;
			this.target = settings.target;
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
		for (const waiting of toSend) this.answers.sending.set(waiting.sameImage, waiting);
		if (this.waiting.length >= batchLimits.images || this.waitingBytes >= batchLimits.bytes)
			await this.flush();
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
			this.answers.sending.delete(entry.sameImage);
			const places = [entry, ...entry.followers];
			for (const place of places) place.image.data = undefined;
			if ('error' in outcome) {
				for (const place of places) failed.push([place, outcome.error]);
				return;
			}
			const result = { ...entry.slot.results[entry.position], ...outcome.result };
			this.answers.sent(entry, result);
			if (typeof result.hashcode !== 'string' || result.warning !== undefined) return;
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

	private async knownImages(settings: UploadSettings): Promise<KnownImages> {
		const { itemIndex, target, lookUpAgainAfterDays } = settings;
		const key = JSON.stringify([target.customer ?? null, lookUpAgainAfterDays]);
		let known = this.known.get(key);
		if (!known) {
			known = await knownImagesOf(this.context, itemIndex, target.customer, lookUpAgainAfterDays);
			this.known.set(key, known);
		}
		return known;
	}
}
