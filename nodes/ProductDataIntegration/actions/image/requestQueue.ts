import type { ImagePlace, Waiting } from './imageAnswers';
import type { BatchLimits, BatchTarget } from './imageBatches';
import type { UploadSettings } from './uploadSettings';

/** No limit learnt from the service yet. */
const NO_CEILING = { images: Infinity, bytes: Infinity };

/** What waits for one request, taken out of the queue to be sent. */
export interface QueuedRequest {
	waiting: Waiting[];
	target: BatchTarget;
	/** Lowered by uploadInBatches when the service refuses a request as too large or invalid. */
	limits: BatchLimits;
}

function bytesOf(places: ImagePlace[]): number {
	return places.reduce((sum, place) => sum + (place.image.bytes ?? 0), 0);
}

/**
 * The images waiting for their request: consecutive items share one while their target and limits
 * agree (an item with others sends in requests of its own), up to those limits and below what the
 * service refused earlier in the run.
 */
export class RequestQueue {
	/** Lowered for the rest of the run by a request refused as too large or found invalid as a whole. */
	private readonly ceiling: BatchLimits = { ...NO_CEILING, narrowInvalid: true };

	/** Target and limits of what waits. */
	private batchKey = '';

	private target: BatchTarget | undefined;

	/** Kept across the requests of one batch key: what a refusal lowered holds for the next ones. */
	private limits: BatchLimits | undefined;

	private waiting: Waiting[] = [];

	private bytes = 0;

	/** Bytes of the images waiting: photos fetched ahead leave room for them. */
	get waitingBytes(): number {
		return this.bytes;
	}

	/** Whether what waits goes out before `toSend` joins: other target or limits, or no room for it. */
	sendsFirst(settings: UploadSettings, toSend: Waiting[]): boolean {
		if (batchKeyOf(settings) !== this.batchKey) return true;
		const limits = this.limits as BatchLimits;
		return (
			this.waiting.length + toSend.length > limits.images ||
			this.bytes + bytesOf(toSend) > limits.bytes
		);
	}

	/** Images join the request being filled, or start the next one; whether it is full now. */
	join(settings: UploadSettings, toSend: Waiting[]): boolean {
		const batchKey = batchKeyOf(settings);
		if (batchKey !== this.batchKey) {
			const { limits } = settings;
			this.batchKey = batchKey;
			this.target = settings.target;
			this.limits = {
				images: Math.min(limits.images, this.ceiling.images),
				bytes: Math.min(limits.bytes, this.ceiling.bytes),
				narrowInvalid: this.ceiling.narrowInvalid,
			};
		}
		this.waiting.push(...toSend);
		this.bytes += bytesOf(toSend);
		const limits = this.limits as BatchLimits;
		return this.waiting.length >= limits.images || this.bytes >= limits.bytes;
	}

	/** What waits, out of the queue; none when nothing does. */
	take(): QueuedRequest | undefined {
		const { waiting, target, limits } = this;
		this.waiting = [];
		this.bytes = 0;
		if (waiting.length === 0 || !target || !limits) return undefined;
		return { waiting, target, limits };
	}

	/** What the service refused (`asked` lowered to the request's limits now) binds the rest of the run. */
	learn(asked: BatchLimits, request: QueuedRequest): void {
		const { limits } = request;
		if (limits.images < asked.images) this.ceiling.images = limits.images;
		if (limits.bytes < asked.bytes) this.ceiling.bytes = limits.bytes;
		this.ceiling.narrowInvalid &&= limits.narrowInvalid;
	}
}

function batchKeyOf(settings: UploadSettings): string {
	return JSON.stringify([settings.targetKey, settings.limits]);
}
