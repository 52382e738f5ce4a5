import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import {
	CONTROL_PREFIX,
	copyImage,
	handleControl,
	summariseUpload,
	type UploadSummary,
} from './control';
import { DEFAULT_ACCOUNT, MESSAGES } from './fixtures';
import { message, send } from './replies';
import { EmulatorHandler } from './server';
import { EmulatorStore, type ImageRecord } from './store';
import type { EmulatorOptions, EmulatorStats, ResolvedEmulatorOptions } from './types';

export { DEFAULT_ACCOUNT, MESSAGES, SERVICE_VERSION } from './fixtures';
export { ERROR_DOCUMENT_PATH, FILE_PATH } from './routes/status';
export { CONTROL_PREFIX, type UploadSummary } from './control';
export type { ImageRecord } from './store';
export type {
	EmulatorAccount,
	EmulatorCustomer,
	EmulatorEnvironment,
	EmulatorOptions,
	EmulatorStats,
	ErrorLocation,
	FaultKind,
	ImageFindLayout,
	ImageUploadLayout,
	ListLayout,
	ProcessingError,
	RateLimitAnswer,
	ResolvedEmulatorOptions,
} from './types';

export interface Emulator {
	/** Base URL, e.g. `http://127.0.0.1:40123` (no trailing slash). */
	url: string;
	options: ResolvedEmulatorOptions;
	close(): Promise<void>;
	stats(): EmulatorStats;
	/** Same as POST /__emulator/reset. */
	reset(): void;
	/** Uploads received so far, oldest first. */
	uploads(): UploadSummary[];
	images(): ImageRecord[];
	/** Same as POST /__emulator/clock: a manual clock from then on, or back to `options.now`. */
	clock: { set(ms: number): void; advance(ms: number): void; real(): void; now(): number };
}

function positiveInteger(name: string, value: number): number {
	if (!Number.isInteger(value) || value <= 0)
		throw new RangeError(`${name} must be a positive integer`);
	return value;
}

export function resolveOptions(options: EmulatorOptions = {}): ResolvedEmulatorOptions {
	const resolved: ResolvedEmulatorOptions = {
		host: options.host ?? '127.0.0.1',
		port: options.port ?? 0,
		environment: options.environment ?? 'production',
		accounts: options.accounts ?? [DEFAULT_ACCOUNT],
		bucketCapacity: positiveInteger('bucketCapacity', options.bucketCapacity ?? 50),
		leakIntervalMs: positiveInteger('leakIntervalMs', options.leakIntervalMs ?? 5000),
		processingMs: options.processingMs ?? 0,
		now: options.now ?? Date.now,
		imageUploadLayout: options.imageUploadLayout ?? 'objects',
		imageFindLayout: options.imageFindLayout ?? 'text',
		listLayout: options.listLayout ?? 'array',
		errorLocation: options.errorLocation ?? 'absolute',
		rateLimitAnswer: options.rateLimitAnswer ?? '429-seconds',
		maxImageRequestBytes: options.maxImageRequestBytes ?? 0,
		maxImagesPerRequest: options.maxImagesPerRequest ?? 0,
		onlyImages: options.onlyImages ?? false,
	};
	for (const name of ['maxImageRequestBytes', 'maxImagesPerRequest'] as const) {
		if (!Number.isInteger(resolved[name]) || resolved[name] < 0)
			throw new RangeError(`${name} must be an integer >= 0`);
	}
	if (!Number.isInteger(resolved.processingMs) || resolved.processingMs < 0) {
		throw new RangeError('processingMs must be an integer >= 0');
	}
	if (resolved.accounts.length === 0) throw new RangeError('accounts must not be empty');
	return resolved;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
	const resolved = resolveOptions(options);
	const store = new EmulatorStore(resolved);
	let url = '';
	const handler = new EmulatorHandler(resolved, store, () => url);

	const server: Server = createServer((req, res) => {
		const target = new URL(req.url ?? '/', 'http://emulator.invalid');
		const work = target.pathname.startsWith(CONTROL_PREFIX)
			? handleControl(req, target, store).then((reply) => send(res, reply))
			: handler.handle(req, res, target);
		work.catch((error: unknown) => {
			process.stderr.write(`emulator: ${error instanceof Error ? error.stack : String(error)}\n`);
			if (!res.headersSent) send(res, message(500, MESSAGES.internalError));
			else res.destroy();
		});
	});
	// Clients keep connections open between polls; the defaults would drop them mid-way.
	server.keepAliveTimeout = 30_000;
	server.headersTimeout = 60_000;
	server.requestTimeout = 0;

	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(resolved.port, resolved.host, () => {
			server.off('error', reject);
			resolve();
		});
	});
	const address = server.address() as AddressInfo;
	const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
	url = `http://${host}:${address.port}`;

	let closed: Promise<void> | null = null;
	return {
		url,
		options: { ...resolved, port: address.port },
		stats: () => store.snapshotStats(),
		reset: () => store.reset(),
		uploads: () =>
			[...store.uploads.values()]
				.sort((a, b) => a.receivedAtMs - b.receivedAtMs)
				.map((u) => summariseUpload(store, u)),
		images: () => [...store.images.values()].map(copyImage),
		clock: {
			set: (ms) => store.setClock(ms),
			advance: (ms) => store.advanceClock(ms),
			real: () => store.realClock(),
			now: () => store.now(),
		},
		close: () => {
			closed ??= new Promise<void>((resolve) => {
				handler.cancelTimers();
				server.close(() => {
					store.dispose();
					resolve();
				});
				server.closeAllConnections();
			});
			return closed;
		},
	};
}
