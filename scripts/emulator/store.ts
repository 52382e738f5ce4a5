import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { LeakyBuckets } from './bucket';
import type {
	EmulatorCustomer,
	EmulatorStats,
	FaultRule,
	ProcessingError,
	ResolvedEmulatorOptions,
} from './types';

export type UploadRoute = 'xml' | 'custom';
export type UploadState = 'processing' | 'succeeded' | 'failed';

export interface UploadRecord {
	id: string;
	username: string;
	route: UploadRoute;
	customer: EmulatorCustomer;
	receivedAtMs: number;
	byteLength: number;
	contentType: string | null;
	filePath: string;
	processingMs: number;
	/** Errors the document ends with once processed; empty for a successful document. */
	errors: ProcessingError[];
	imageUris: string[];
	/** False when the document was too large to be read as text and was stored unchecked. */
	checked: boolean;
}

export interface ImageRecord {
	hashcode: string;
	/** md5 of the uploaded bytes; null for images known only by the URI a document referenced. */
	md5: string | null;
	uris: string[];
	fileName: string | null;
	contentType: string | null;
	size: number | null;
	invert: boolean;
	clippingPath: string | null;
	uploads: number;
	/** Sessions whose successful processing makes a URI-only image available. */
	sessions: string[];
}

export function imageHashcodeForBytes(md5: string): string {
	return createHash('sha256').update(`image-bytes:${md5}`).digest('hex').slice(0, 32);
}

export function imageHashcodeForUri(uri: string): string {
	return createHash('sha256').update(`image-uri:${uri}`).digest('hex').slice(0, 32);
}

// Folders of emulators still open; removed when the process exits without closing them (a test
// that forgot close(), a benchmark stopped half-way), so temporary files do not pile up.
const openDirectories = new Set<string>();
let exitHookInstalled = false;

function trackDirectory(directory: string): void {
	openDirectories.add(directory);
	if (exitHookInstalled) return;
	exitHookInstalled = true;
	process.once('exit', () => {
		for (const open of openDirectories) rmSync(open, { recursive: true, force: true });
	});
}

export class EmulatorStore {
	readonly uploads = new Map<string, UploadRecord>();
	readonly images = new Map<string, ImageRecord>();
	private readonly md5Index = new Map<string, string>();
	private readonly uriIndex = new Map<string, string>();
	readonly buckets: LeakyBuckets;
	faults: FaultRule[] = [];
	/** Documents received whose text contains one of these finish processing with errors. */
	failingTexts: string[] = [];
	private manualClock: number | null = null;
	private statistics: EmulatorStats = EmulatorStore.emptyStats();
	readonly fileDirectory: string;
	/** What one image upload may hold; starts from the options, changed through the control routes. */
	readonly imageLimits: { maxRequestBytes: number; maxImages: number; onlyImages: boolean };

	constructor(private readonly options: ResolvedEmulatorOptions) {
		this.imageLimits = {
			maxRequestBytes: options.maxImageRequestBytes,
			maxImages: options.maxImagesPerRequest,
			onlyImages: options.onlyImages,
		};
		this.buckets = new LeakyBuckets(options.bucketCapacity, options.leakIntervalMs);
		this.fileDirectory = mkdtempSync(join(tmpdir(), 'product-data-emulator-'));
		trackDirectory(this.fileDirectory);
	}

	private static emptyStats(): EmulatorStats {
		return {
			requests: {},
			rejected429: 0,
			peakBucketLevel: 0,
			uploads: 0,
			images: 0,
			rejected401: 0,
			faults: 0,
			rejected413: 0,
		};
	}

	now(): number {
		return this.manualClock ?? this.options.now();
	}

	setClock(ms: number): void {
		this.manualClock = ms;
	}

	advanceClock(ms: number): void {
		this.manualClock = this.now() + ms;
	}

	realClock(): void {
		this.manualClock = null;
	}

	get stats(): EmulatorStats {
		return this.statistics;
	}

	snapshotStats(): EmulatorStats {
		return { ...this.statistics, requests: { ...this.statistics.requests } };
	}

	noteTooLarge(): void {
		this.statistics.rejected413++;
	}

	countRequest(key: string): void {
		this.statistics.requests[key] = (this.statistics.requests[key] ?? 0) + 1;
	}

	notePeak(level: number): void {
		this.statistics.peakBucketLevel = Math.max(this.statistics.peakBucketLevel, Math.ceil(level));
	}

	/** Takes the next fault for a path, if any is pending. */
	takeFault(path: string): FaultRule | null {
		const index = this.faults.findIndex((f) => f.path === null || path.startsWith(f.path));
		if (index < 0) return null;
		const fault = this.faults[index];
		fault.remaining--;
		if (fault.remaining <= 0) this.faults.splice(index, 1);
		this.statistics.faults++;
		return fault;
	}

	filePathFor(id: string): string {
		return join(this.fileDirectory, `${id}.xml`);
	}

	addUpload(upload: UploadRecord): void {
		this.uploads.set(upload.id, upload);
		this.statistics.uploads++;
		for (const uri of upload.imageUris) {
			const existing = this.uriIndex.get(uri);
			const image = existing ? this.images.get(existing) : undefined;
			if (image) {
				image.sessions.push(upload.id);
				continue;
			}
			const hashcode = imageHashcodeForUri(uri);
			this.uriIndex.set(uri, hashcode);
			this.images.set(hashcode, {
				hashcode,
				md5: null,
				uris: [uri],
				fileName: null,
				contentType: null,
				size: null,
				invert: false,
				clippingPath: null,
				uploads: 0,
				sessions: [upload.id],
			});
		}
	}

	uploadState(upload: UploadRecord, now = this.now()): UploadState {
		if (now < upload.receivedAtMs + upload.processingMs) return 'processing';
		return upload.errors.length > 0 ? 'failed' : 'succeeded';
	}

	addImage(
		data: Buffer,
		fileName: string | null,
		contentType: string | null,
		invert: boolean,
		clippingPath: string | null,
	): ImageRecord {
		const md5 = createHash('md5').update(data).digest('hex');
		const hashcode = imageHashcodeForBytes(md5);
		let image = this.images.get(hashcode);
		if (!image) {
			image = {
				hashcode,
				md5,
				uris: [],
				fileName,
				contentType,
				size: data.length,
				invert,
				clippingPath,
				uploads: 0,
				sessions: [],
			};
			this.images.set(hashcode, image);
			this.md5Index.set(md5, hashcode);
		}
		image.fileName = fileName;
		image.contentType = contentType;
		image.invert = invert;
		image.clippingPath = clippingPath;
		image.uploads++;
		this.statistics.images++;
		return image;
	}

	/** An uploaded image exists at once; an image referenced by URI once a document naming it succeeded. */
	imageAvailable(image: ImageRecord, now = this.now()): boolean {
		if (image.uploads > 0) return true;
		return image.sessions.some((id) => {
			const upload = this.uploads.get(id);
			return upload !== undefined && this.uploadState(upload, now) === 'succeeded';
		});
	}

	findImage(by: { md5?: string; uri?: string; hashcode?: string }): ImageRecord | null {
		let hashcode: string | undefined = by.hashcode;
		if (by.md5 !== undefined) hashcode = this.md5Index.get(by.md5.toLowerCase());
		if (by.uri !== undefined) hashcode = this.uriIndex.get(by.uri);
		const image = hashcode === undefined ? undefined : this.images.get(hashcode);
		return image && this.imageAvailable(image) ? image : null;
	}

	/** Forgets everything clients did; the clock mode and the options stay. */
	reset(): void {
		this.uploads.clear();
		this.images.clear();
		this.md5Index.clear();
		this.uriIndex.clear();
		this.buckets.clear();
		this.faults = [];
		this.failingTexts = [];
		this.statistics = EmulatorStore.emptyStats();
		rmSync(this.fileDirectory, { recursive: true, force: true });
		mkdirSync(this.fileDirectory, { recursive: true });
	}

	dispose(): void {
		openDirectories.delete(this.fileDirectory);
		rmSync(this.fileDirectory, { recursive: true, force: true });
	}
}
