// The document routes: the asynchronous XML upload and the list of uploads by date.
import { constants as bufferConstants } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';

import { receiveUpload } from '../body';
import { isoWithOffset } from '../fixtures';
import { invalid, json, text, type Reply } from '../replies';
import type { EmulatorStore, UploadRecord, UploadRoute } from '../store';
import type { EmulatorCustomer, ProcessingError } from '../types';
import { analyseDocument, decodeDocument } from '../xml';
import { header, route, type RequestContext, type Route, type Service } from './route';
import { FILE_PATH } from './status';

export function xmlRoutes(service: Service): Route[] {
	return [
		route('PUT /api/xml', /^\/api\/xml$/, 'required', (c) => receiveDocument(service, c, 'xml')),
		route('PUT /api/xml/custom', /^\/api\/xml\/custom$/, 'required', (c) =>
			receiveDocument(service, c, 'custom'),
		),
		route('GET /api/xml/{date}', /^\/api\/xml\/([^/]+)$/, 'required', (c) =>
			listByDate(service, c),
		),
	];
}

async function receiveDocument(
	{ options, store }: Service,
	context: RequestContext,
	uploadRoute: UploadRoute,
): Promise<Reply> {
	const { req } = context;
	const id = randomUUID();
	const filePath = store.filePathFor(id);
	let received: { byteLength: number; body: Buffer | null };
	try {
		received = await receiveUpload(req, filePath, bufferConstants.MAX_STRING_LENGTH);
	} catch (error) {
		await rm(filePath, { force: true });
		throw error;
	}
	const { byteLength, body } = received;
	const customer = context.customer as EmulatorCustomer;
	const receivedAtMs = store.now();
	const errors: ProcessingError[] = [];
	let processingMs = options.processingMs;
	let imageUris: string[] = [];
	// A body too large for a V8 string is stored unchecked (body === null): no markers, no images.
	if (body !== null) {
		const decoded = byteLength > 0 ? decodeDocument(body) : null;
		const analysis = decoded
			? analyseDocument(decoded.text, options.environment, decoded.encodingProblem)
			: null;
		if (analysis === null || analysis.notWellFormed !== null) {
			await rm(filePath, { force: true });
			return invalid();
		}
		if (analysis.failMarker) {
			errors.push({
				code: 'ProcessingFailed',
				message: 'The integration rejected the document: processing ended with an error.',
			});
		}
		errors.push(...analysis.validationErrors);
		if (analysis.processingMs !== null) processingMs = analysis.processingMs;
		imageUris = analysis.imageUris;
	}
	const record: UploadRecord = {
		id,
		username: context.auth.account.username,
		route: uploadRoute,
		customer,
		receivedAtMs,
		byteLength,
		contentType: header(req, 'content-type') ?? null,
		filePath,
		processingMs,
		errors,
		imageUris,
		checked: body !== null,
	};
	store.addUpload(record);
	return text(202, id);
}

function listByDate({ options, store }: Service, context: RequestContext): Reply {
	const [date] = context.params;
	if (!isValidDate(date)) return invalid();
	const customer = context.customer as EmulatorCustomer;
	const records = [...store.uploads.values()]
		.filter(
			(u) =>
				u.username === context.auth.account.username &&
				u.customer.serviceId === customer.serviceId &&
				new Date(u.receivedAtMs).toISOString().slice(0, 10) === date,
		)
		.sort((a, b) => a.receivedAtMs - b.receivedAtMs)
		.map((u) => uploadRecord(store, u, context.origin));
	if (options.listLayout === 'single' && records.length === 1) return json(200, records[0]);
	return json(200, records);
}

function uploadRecord(
	store: EmulatorStore,
	upload: UploadRecord,
	origin: string,
): Record<string, unknown> {
	return {
		id: upload.id,
		receivedAt: isoWithOffset(upload.receivedAtMs),
		fileLenght: upload.byteLength,
		sentBy: {
			name: upload.customer.name,
			serviceId: upload.customer.serviceId,
			externalId: upload.customer.externalId,
		},
		file: `${origin}${FILE_PATH.replace('{id}', upload.id)}`,
		result: `${origin}/api/status/${upload.id}/result`,
		errors: store.uploadState(upload) === 'failed' ? upload.errors : [],
	};
}

function isValidDate(value: string): boolean {
	const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
	if (!match) return false;
	const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
	const date = new Date(Date.UTC(year, month - 1, day));
	return (
		date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
	);
}
