import type { IncomingMessage } from 'node:http';

import { readBody } from './body';
import { isoWithOffset } from './fixtures';
import { json, message, type Reply } from './replies';
import type { EmulatorStore, ImageRecord, UploadRecord } from './store';
import type { FaultKind } from './types';

export const CONTROL_PREFIX = '/__emulator/';

const FAULT_KINDS: FaultKind[] = [
	'500',
	'503',
	'429',
	'reset',
	'slow',
	'hang',
	'redirect',
	'huge',
	'hostile-entry',
];
const DEFAULT_SLOW_MS = 1000;

export interface UploadSummary {
	id: string;
	username: string;
	route: 'xml' | 'custom';
	customerServiceId: number;
	receivedAt: string;
	byteLength: number;
	processingMs: number;
	state: 'processing' | 'succeeded' | 'failed';
	errors: UploadRecord['errors'];
	imageUris: number;
	checked: boolean;
}

export function summariseUpload(store: EmulatorStore, upload: UploadRecord): UploadSummary {
	return {
		id: upload.id,
		username: upload.username,
		route: upload.route,
		customerServiceId: upload.customer.serviceId,
		receivedAt: isoWithOffset(upload.receivedAtMs),
		byteLength: upload.byteLength,
		processingMs: upload.processingMs,
		state: store.uploadState(upload),
		errors: upload.errors,
		imageUris: upload.imageUris.length,
		checked: upload.checked,
	};
}

export function copyImage(image: ImageRecord): ImageRecord {
	return { ...image, uris: [...image.uris], sessions: [...image.sessions] };
}

class ControlError extends Error {}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
	const raw = (await readBody(req)).toString('utf8');
	let value: unknown;
	try {
		value = raw.trim() === '' ? {} : JSON.parse(raw);
	} catch {
		throw new ControlError('The body is not valid JSON.');
	}
	if (typeof value !== 'object' || value === null || Array.isArray(value)) {
		throw new ControlError('The body must be a JSON object.');
	}
	return value as Record<string, unknown>;
}

function isCount(value: unknown): value is number {
	return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** Control routes: no authentication, no bucket, no faults, not counted in the statistics. */
export async function handleControl(
	req: IncomingMessage,
	url: URL,
	store: EmulatorStore,
): Promise<Reply> {
	const action = `${req.method} ${url.pathname.slice(CONTROL_PREFIX.length)}`;
	try {
		switch (action) {
			case 'POST reset':
				await readBody(req);
				store.reset();
				return json(200, { ok: true });
			case 'GET stats':
				return json(200, store.snapshotStats());
			case 'GET uploads':
				return json(
					200,
					[...store.uploads.values()].map((u) => summariseUpload(store, u)),
				);
			case 'GET images':
				return json(200, [...store.images.values()].map(copyImage));
			case 'POST bucket': {
				const body = await readJson(req);
				if (typeof body.username !== 'string' || body.username === '') {
					throw new ControlError('"username" must be a non-empty string.');
				}
				if (typeof body.level !== 'number' || !Number.isFinite(body.level) || body.level < 0) {
					throw new ControlError('"level" must be a number >= 0.');
				}
				const level = store.buckets.fill(body.username, body.level, store.now());
				return json(200, { username: body.username, level });
			}
			case 'POST faults': {
				const body = await readJson(req);
				if (!isCount(body.count) || body.count === 0) {
					throw new ControlError('"count" must be a positive integer.');
				}
				if (!FAULT_KINDS.includes(body.kind as FaultKind)) {
					throw new ControlError(`"kind" must be one of ${FAULT_KINDS.join(', ')}.`);
				}
				if (body.delayMs !== undefined && !isCount(body.delayMs)) {
					throw new ControlError('"delayMs" must be an integer >= 0.');
				}
				if (
					body.path !== undefined &&
					(typeof body.path !== 'string' || !body.path.startsWith('/'))
				) {
					throw new ControlError('"path" must be a path starting with "/".');
				}
				if (body.retryAfter !== undefined && typeof body.retryAfter !== 'string') {
					throw new ControlError('"retryAfter" must be the header value as a string.');
				}
				if (
					body.kind === 'redirect' &&
					(typeof body.location !== 'string' || body.location === '')
				) {
					throw new ControlError('"location" must be the URL to redirect to.');
				}
				if (body.kind === 'huge' && (!isCount(body.bytes) || body.bytes === 0)) {
					throw new ControlError('"bytes" must be a positive integer.');
				}
				if (body.kind === 'hostile-entry' && !isCount(body.entry)) {
					throw new ControlError('"entry" must be an integer >= 0.');
				}
				if (
					body.status !== undefined &&
					(!isCount(body.status) || body.status < 200 || body.status > 599)
				) {
					throw new ControlError('"status" must be an HTTP status from 200 to 599.');
				}
				store.faults.push({
					kind: body.kind as FaultKind,
					remaining: body.count,
					delayMs: (body.delayMs as number | undefined) ?? DEFAULT_SLOW_MS,
					path: (body.path as string | undefined) ?? null,
					retryAfter: body.retryAfter as string | undefined,
					location: body.location as string | undefined,
					status: body.status as number | undefined,
					bytes: body.bytes as number | undefined,
					entry: body.entry as number | undefined,
					value: body.value,
				});
				return json(200, { pending: store.faults.reduce((sum, f) => sum + f.remaining, 0) });
			}
			case 'POST failing': {
				const body = await readJson(req);
				if (
					!Array.isArray(body.texts) ||
					!body.texts.every((entry) => typeof entry === 'string' && entry !== '')
				) {
					throw new ControlError(
						'"texts" must be a list of non-empty strings ([] stops failing documents).',
					);
				}
				store.failingTexts = body.texts as string[];
				return json(200, { texts: store.failingTexts });
			}
			case 'POST limits': {
				const body = await readJson(req);
				for (const name of ['maxImageRequestBytes', 'maxImagesPerRequest'] as const) {
					if (body[name] !== undefined && !isCount(body[name]))
						throw new ControlError(`"${name}" must be an integer >= 0 (0: no limit).`);
				}
				if (body.onlyImages !== undefined && typeof body.onlyImages !== 'boolean')
					throw new ControlError('"onlyImages" must be true or false.');
				const limits = store.imageLimits;
				limits.onlyImages = (body.onlyImages as boolean | undefined) ?? limits.onlyImages;
				limits.maxRequestBytes =
					(body.maxImageRequestBytes as number | undefined) ?? limits.maxRequestBytes;
				limits.maxImages = (body.maxImagesPerRequest as number | undefined) ?? limits.maxImages;
				return json(200, {
					maxImageRequestBytes: limits.maxRequestBytes,
					maxImagesPerRequest: limits.maxImages,
					onlyImages: limits.onlyImages,
				});
			}
			case 'POST clock': {
				const body = await readJson(req);
				if (body.real === true) {
					store.realClock();
				} else if (typeof body.set === 'string') {
					const ms = Date.parse(body.set);
					if (Number.isNaN(ms)) throw new ControlError('"set" must be an ISO 8601 timestamp.');
					store.setClock(ms);
				} else if (typeof body.advanceMs === 'number' && Number.isFinite(body.advanceMs)) {
					store.advanceClock(body.advanceMs);
				} else {
					throw new ControlError(
						'Send {"set":"<ISO timestamp>"}, {"advanceMs":<ms>} or {"real":true}.',
					);
				}
				return json(200, { now: isoWithOffset(store.now()) });
			}
			default:
				await readBody(req);
				return message(404, `No control route ${action}.`);
		}
	} catch (error) {
		if (error instanceof ControlError) return message(400, error.message);
		throw error;
	}
}
