export interface EmulatorCustomer {
	serviceId: number;
	externalId: string | null;
	name: string;
}

export interface EmulatorAccount {
	username: string;
	password: string;
	customers: EmulatorCustomer[];
}

export type EmulatorEnvironment = 'production' | 'test';
export type ImageUploadLayout = 'objects' | 'strings' | 'text';
export type ImageFindLayout = 'text' | 'json-string' | 'object';
export type ListLayout = 'array' | 'single';
export type ErrorLocation = 'absolute' | 'relative';
export type RateLimitAnswer = '429-seconds' | '429-date' | '429-none' | '503';

export interface EmulatorOptions {
	host?: string;
	port?: number;
	environment?: EmulatorEnvironment;
	accounts?: EmulatorAccount[];
	bucketCapacity?: number;
	leakIntervalMs?: number;
	processingMs?: number;
	now?: () => number;
	imageUploadLayout?: ImageUploadLayout;
	imageFindLayout?: ImageFindLayout;
	listLayout?: ListLayout;
	errorLocation?: ErrorLocation;
	rateLimitAnswer?: RateLimitAnswer;
	/** Largest image upload body accepted, in bytes; 0: no limit. A larger one is answered 413. */
	maxImageRequestBytes?: number;
	/** Most `file` parts accepted in one image upload; 0: no limit. More are answered 413. */
	maxImagesPerRequest?: number;
	/** Whether an image upload holding a `file` part that is not an image (by its first bytes) is refused whole, 400, as the service does. */
	onlyImages?: boolean;
}

export type ResolvedEmulatorOptions = Required<EmulatorOptions>;

export interface EmulatorStats {
	/** Requests that reached the service, keyed by `METHOD /route template`. */
	requests: Record<string, number>;
	/** Requests refused because the bucket was full, whatever status `rateLimitAnswer` gives them. */
	rejected429: number;
	/** Highest bucket level of any account right after a request was let in. */
	peakBucketLevel: number;
	/** Documents accepted with 202. */
	uploads: number;
	/** Images stored through POST /api/images (one per `file` part, repeats included). */
	images: number;
	/** Requests refused with 401. */
	rejected401: number;
	/** Requests answered by an injected fault. */
	faults: number;
	/** Image uploads refused with 413 for exceeding the request size or image count limit. */
	rejected413: number;
}

export interface ProcessingError {
	code: string;
	message: string;
	element?: string;
	line?: number;
}

export type FaultKind =
	| '500'
	| '503'
	| '429'
	| 'reset'
	| 'slow'
	| 'hang'
	| 'redirect'
	| 'huge'
	| 'hostile-entry';

export interface FaultRule {
	kind: FaultKind;
	remaining: number;
	delayMs: number;
	path: string | null;
	/** `429`: the Retry-After header as sent, none when absent. */
	retryAfter?: string;
	/** `redirect`: the Location header. */
	location?: string;
	/** `huge`: status and size of the answer. */
	status?: number;
	bytes?: number;
	/** `hostile-entry`: which entry of the upload's answer (from 0) gets `value` for its hashcode. */
	entry?: number;
	value?: unknown;
}
