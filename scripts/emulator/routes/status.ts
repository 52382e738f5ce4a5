// The routes of one upload session: its state, its result, its error document and the file itself.
import { createReadStream } from 'node:fs';

import { MESSAGES } from '../fixtures';
import { json, sessionNotFound, text, type Reply } from '../replies';
import type { EmulatorStore, UploadRecord } from '../store';
import { route, type RequestContext, type Route, type Service } from './route';

export const ERROR_DOCUMENT_PATH = '/api/status/{id}/errors';
export const FILE_PATH = '/api/files/{id}';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function statusRoutes(service: Service): Route[] {
	return [
		route('GET /api/status/{id}/done', /^\/api\/status\/([^/]+)\/done$/, 'optional', (c) =>
			done(service, c),
		),
		route('GET /api/status/{id}/result', /^\/api\/status\/([^/]+)\/result$/, 'optional', (c) =>
			result(service, c),
		),
		route(`GET ${ERROR_DOCUMENT_PATH}`, /^\/api\/status\/([^/]+)\/errors$/, 'optional', (c) =>
			errorDocument(service, c),
		),
		route(`GET ${FILE_PATH}`, /^\/api\/files\/([^/]+)$/, 'optional', (c) => file(service, c)),
	];
}

function session(store: EmulatorStore, context: RequestContext): UploadRecord | null {
	const [id] = context.params;
	if (!GUID.test(id)) return null;
	const upload = store.uploads.get(id.toLowerCase());
	return upload && upload.username === context.auth.account.username ? upload : null;
}

function done({ store }: Service, context: RequestContext): Reply {
	const upload = session(store, context);
	if (!upload) return sessionNotFound();
	return json(200, store.uploadState(upload) !== 'processing');
}

function result({ options, store }: Service, context: RequestContext): Reply {
	const upload = session(store, context);
	if (!upload) return sessionNotFound();
	const state = store.uploadState(upload);
	if (state === 'processing') return text(202, MESSAGES.processing);
	if (state === 'succeeded') return { status: 200 };
	const path = ERROR_DOCUMENT_PATH.replace('{id}', upload.id);
	const location = options.errorLocation === 'relative' ? path : `${context.origin}${path}`;
	return { status: 301, headers: { Location: location } };
}

function errorDocument({ store }: Service, context: RequestContext): Reply {
	const upload = session(store, context);
	if (!upload) return sessionNotFound();
	const state = store.uploadState(upload);
	if (state === 'processing') return text(202, MESSAGES.processing);
	return json(200, {
		id: upload.id,
		message:
			state === 'failed'
				? `Processing of the document ended with ${upload.errors.length} error(s).`
				: 'Processing of the document ended without errors.',
		errors: state === 'failed' ? upload.errors : [],
	});
}

function file({ store }: Service, context: RequestContext): Reply {
	const upload = session(store, context);
	if (!upload) return sessionNotFound();
	return {
		status: 200,
		headers: {
			'Content-Type': upload.contentType ?? 'application/xml',
			'Content-Length': String(upload.byteLength),
		},
		body: createReadStream(upload.filePath),
	};
}
