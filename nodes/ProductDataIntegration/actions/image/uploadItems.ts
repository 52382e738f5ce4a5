import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { knownImagesOf, type KnownImages } from '../../../shared/knownImages';
import type { ItemFailures } from '../itemErrors';
import { RunParameters } from '../runParameters';
import { ImageAnswers, type ImagePlace, type Waiting } from './imageAnswers';
import { uploadInBatches } from './imageBatches';
import { RunImages } from './itemImages';
import { Outputs } from './outputs';
import { RequestQueue } from './requestQueue';
import type { UploadSettings } from './uploadSettings';

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
	const run = new UploadRun(context, failures, items.length);
	try {
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			try {
				await run.add(itemIndex);
			} catch (error) {
				run.fail(itemIndex, error);
			}
		}
	} finally {
		// Whether every item had its turn or a failure stopped the run, the photos still fetched
		// ahead are for no item.
		run.images.end();
	}
	await run.flush();
	return run.outputs.items();
}

/** The stages of a run, item by item: settings and images, answers, the request queue, outputs. */
class UploadRun {
	readonly outputs: Outputs;

	readonly images: RunImages;

	private readonly answers: ImageAnswers;

	private readonly requests = new RequestQueue();

	private readonly known = new Map<string, KnownImages>();

	constructor(
		private readonly context: IExecuteFunctions,
		private readonly failures: ItemFailures,
		itemCount: number,
	) {
		this.outputs = new Outputs(itemCount);
		this.answers = new ImageAnswers(context, this.outputs);
		this.images = new RunImages(
			context,
			new RunParameters(context),
			itemCount,
			this.answers,
			this.requests,
		);
	}

	/**
	 * Marks the item failed; without Continue On Fail the run stops here, and its error lists the
	 * hashcodes the run got from the service, so that none is lost. Its images that reached the
	 * service in an earlier request stay in its output.
	 */
	fail(itemIndex: number, error: unknown): void {
		this.images.forget(itemIndex);
		if (this.outputs.hasFailed(itemIndex)) return;
		const uploaded = this.outputs.uploadedOf(itemIndex);
		const failure = this.failures.output(
			error,
			[itemIndex],
			uploaded.length > 0 ? { uploaded } : {},
			(nodeError) => {
				nodeError.description = [nodeError.description, this.outputs.listUploaded()]
					.filter(Boolean)
					.join('\n\n');
			},
		);
		this.outputs.write(itemIndex, { failure });
	}

	/** One item: its settings, its images, the answers the run has for them, the rest queued. */
	async add(itemIndex: number): Promise<void> {
		const settings = this.images.settingsOf(itemIndex);
		this.images.fetchAhead(settings);
		const known = settings.rememberKnownImages ? await this.knownImages(settings) : undefined;
		const images = await this.images.of(settings);
		if ('answer' in images) {
			this.outputs.write(itemIndex, { position: 0, result: images.answer });
			return;
		}
		const places = this.answers.placesOf(settings, images.images, known);
		const toSend = await this.answers.toSend(settings, places);
		// Photos answered without a request need their bytes no longer; those sent, until their request is.
		const sending = new Set(toSend.map((waiting) => waiting.image));
		this.images.letGo(places.map((place) => place.image).filter((image) => !sending.has(image)));
		if (toSend.length > 0) await this.queue(settings, toSend);
	}

	/** Images to send join the request being filled, or start the next one. */
	private async queue(settings: UploadSettings, toSend: Waiting[]): Promise<void> {
		if (this.requests.sendsFirst(settings, toSend)) await this.flush();
		const full = this.requests.join(settings, toSend);
		// Claimed only once queued: an item that fails before (a lookup, an earlier request) leaves no
		// later item waiting for an image that no one sends.
		this.answers.queued(toSend);
		if (full) await this.flush();
	}

	/** Uploads what waits; results go to their items (and the same images of later items), failures fail them. */
	async flush(): Promise<void> {
		const request = this.requests.take();
		if (!request) return;
		const { waiting, target, limits } = request;
		const asked = { ...limits };
		const outcomes = await uploadInBatches(this.context, waiting, target, limits);
		// What the service refused binds the rest of the run, whatever limits later items ask for.
		this.requests.learn(asked, request);
		const learnt = new Map<KnownImages, Array<{ md5: string; hashcode: string }>>();
		const failed: Array<[ImagePlace, unknown]> = [];
		outcomes.forEach((outcome, n) => {
			const entry = waiting[n];
			const places = [entry, ...entry.followers];
			this.images.letGo(places.map((place) => place.image));
			if ('error' in outcome) {
				this.answers.notSent(entry);
				for (const place of places) failed.push([place, outcome.error]);
				return;
			}
			const result = this.answers.sent(entry, outcome.result);
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
		for (const [place, error] of failed) this.fail(place.itemIndex, error);
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
