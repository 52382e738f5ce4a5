import { randomUUID } from 'node:crypto';
import { constants as bufferConstants } from 'node:buffer';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

import { authenticate, resolveCustomer, type Authenticated } from './auth';
import { environmentInfo, isoWithOffset, MESSAGES } from './fixtures';
import { multipartBoundary, MultipartError, parseMultipart } from './multipart';
import type { EmulatorStore, UploadRecord, UploadRoute } from './store';
import type { EmulatorCustomer, FaultRule, ProcessingError, ResolvedEmulatorOptions } from './types';
import { analyseDocument, decodeDocument } from './xml';

export interface Reply {
	status: number;
	headers?: Record<string, string>;
	body?: string | Buffer | Readable;
}

interface RequestContext {
	req: IncomingMessage;
	url: URL;
	params: string[];
	auth: Authenticated;
	/** Customer named by the headers; null where the headers are optional and were not sent. */
	customer: EmulatorCustomer | null;
	/** Origin the client used, for the absolute URLs the service hands out. */
	origin: string;
}

interface Route {
	method: string;
	pattern: RegExp;
	key: string;
	customerHeaders: 'required' | 'optional';
	handle: (context: RequestContext) => Promise<Reply> | Reply;
}

export const ERROR_DOCUMENT_PATH = '/api/status/{id}/errors';
export const FILE_PATH = '/api/files/{id}';

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

export function json(status: number, value: unknown): Reply {
	return { status, headers: { 'Content-Type': JSON_TYPE }, body: JSON.stringify(value) };
}

export function text(status: number, value: string): Reply {
	return { status, headers: { 'Content-Type': TEXT_TYPE }, body: value };
}

export function message(status: number, value: string): Reply {
	return json(status, { message: value });
}

/** `count` bytes of filler text, produced as they are sent. */
function filler(count: number): Readable {
	const chunk = Buffer.alloc(64 * 1024, 'x');
	return Readable.from(
		(function* () {
			for (let left = count; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
		})(),
	);
}

/** The answer of a fault that replaces the request's handling (nothing processed), if it is one. */
function faultAnswer(fault: FaultRule): Reply | undefined {
	switch (fault.kind) {
		case '500':
			return message(500, MESSAGES.internalError);
		case '503':
			return text(503, MESSAGES.unavailable);
		case '429': {
			const reply = message(429, MESSAGES.rateLimited);
			if (fault.retryAfter !== undefined) (reply.headers as Record<string, string>)['Retry-After'] = fault.retryAfter;
			return reply;
		}
		case 'redirect':
			return { status: 302, headers: { Location: fault.location ?? '/' } };
		case 'huge':
			return { status: fault.status ?? 200, headers: { 'Content-Type': TEXT_TYPE }, body: filler(fault.bytes ?? 0) };
		default:
			return undefined;
	}
}

const invalid = () => message(400, MESSAGES.invalid);
const denied = () => message(401, MESSAGES.denied);
const sessionNotFound = () => message(404, MESSAGES.sessionNotFound);

/** Reads a whole body into memory: image uploads and control requests, both small. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
	return Buffer.concat(chunks);
}

/**
 * Streams an upload to its file and keeps it in memory as well while it is small enough to be
 * checked as text. A larger body (beyond what a V8 string can hold) goes to the file only, so even
 * a multi-gigabyte upload costs no more memory than a chunk.
 */
export async function receiveUpload(
	req: IncomingMessage,
	filePath: string,
	checkLimit: number,
): Promise<{ byteLength: number; body: Buffer | null }> {
	const file = createWriteStream(filePath);
	const failed = new Promise<never>((_, reject) => file.once('error', reject));
	failed.catch(() => undefined);
	const announced = Number(req.headers['content-length']);
	const sized =
		Number.isSafeInteger(announced) && announced >= 0 && announced <= checkLimit && req.headers['transfer-encoding'] === undefined;
	const whole = sized ? Buffer.allocUnsafe(announced) : null;
	let chunks: Buffer[] | null = sized ? null : [];
	let byteLength = 0;
	try {
		for await (const chunk of req as AsyncIterable<Buffer>) {
			if (whole) chunk.copy(whole, byteLength);
			byteLength += chunk.length;
			if (chunks) {
				chunks.push(chunk);
				if (byteLength > checkLimit) chunks = null;
			}
			if (!file.write(chunk)) {
				await Promise.race([new Promise<void>((resolve) => file.once('drain', () => resolve())), failed]);
			}
		}
	} finally {
		await Promise.race([new Promise<void>((resolve) => file.end(resolve)), failed]);
	}
	const body = whole ? whole.subarray(0, byteLength) : chunks ? Buffer.concat(chunks, byteLength) : null;
	return { byteLength, body };
}

/** Lets a body arrive and drops it, so an early answer never races the client's upload. */
export async function drainBody(req: IncomingMessage): Promise<void> {
	if (req.complete || req.readableEnded) return;
	for await (const chunk of req) void chunk;
}

function header(req: IncomingMessage, name: string): string | undefined {
	const value = req.headers[name];
	return Array.isArray(value) ? value.join(', ') : value;
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

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class EmulatorHandler {
	private readonly routes: Route[];
	private readonly timers = new Set<NodeJS.Timeout>();

	constructor(
		private readonly options: ResolvedEmulatorOptions,
		private readonly store: EmulatorStore,
		private readonly fallbackOrigin: () => string,
	) {
		const route = (
			key: string,
			pattern: RegExp,
			customerHeaders: Route['customerHeaders'],
			handle: Route['handle'],
		): Route => ({ method: key.split(' ')[0], pattern, key, customerHeaders, handle });
		this.routes = [
			route('PUT /api/xml', /^\/api\/xml$/, 'required', (c) => this.upload(c, 'xml')),
			route('PUT /api/xml/custom', /^\/api\/xml\/custom$/, 'required', (c) => this.upload(c, 'custom')),
			route('GET /api/xml/{date}', /^\/api\/xml\/([^/]+)$/, 'required', (c) => this.listByDate(c)),
			route('GET /api/auth/me', /^\/api\/auth\/me$/, 'optional', (c) => this.me(c)),
			route('GET /api/status/{id}/done', /^\/api\/status\/([^/]+)\/done$/, 'optional', (c) => this.done(c)),
			route('GET /api/status/{id}/result', /^\/api\/status\/([^/]+)\/result$/, 'optional', (c) =>
				this.result(c),
			),
			route(`GET ${ERROR_DOCUMENT_PATH}`, /^\/api\/status\/([^/]+)\/errors$/, 'optional', (c) =>
				this.errorDocument(c),
			),
			route(`GET ${FILE_PATH}`, /^\/api\/files\/([^/]+)$/, 'optional', (c) => this.file(c)),
			route('POST /api/images', /^\/api\/images$/, 'required', (c) => this.uploadImages(c)),
			route('HEAD /api/images/{hashcode}', /^\/api\/images\/([^/]+)$/, 'required', (c) =>
				this.imageExists(c),
			),
			route('GET /api/images', /^\/api\/images$/, 'required', (c) => this.findImage(c)),
		];
	}

	cancelTimers(): void {
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
	}

	/** Entry point for every request that is not a control route. */
	async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
		const method = req.method ?? 'GET';
		const path = url.pathname;
		const candidates = this.routes.filter((r) => r.pattern.test(path));
		const route = candidates.find((r) => r.method === method);
		const template = candidates.length > 0 ? candidates[0].key.split(' ')[1] : '(unknown route)';
		this.store.countRequest(route ? route.key : `${method} ${template}`);

		const fault = this.store.takeFault(path);
		const refusal = fault ? faultAnswer(fault) : undefined;
		if (refusal) {
			await drainBody(req);
			return this.send(res, refusal);
		}

		let reply: Reply;
		try {
			reply = await this.dispatch(req, url, route, candidates.length > 0);
		} catch (error) {
			// A client that went away mid-request is nothing to report.
			if (req.destroyed || res.destroyed) return;
			// A fault of the emulator itself: answer like a failing service and keep the trace visible.
			process.stderr.write(`emulator: ${error instanceof Error ? error.stack : String(error)}\n`);
			await drainBody(req).catch(() => undefined);
			reply = message(500, MESSAGES.internalError);
		}
		if (fault?.kind === 'reset') {
			// The request was received and handled in full; only the answer is lost. A client cannot
			// tell whether an upload took place, which is exactly the case it must not retry blindly.
			if (reply.body && typeof reply.body !== 'string' && !Buffer.isBuffer(reply.body)) reply.body.destroy();
			req.socket.resetAndDestroy();
			return;
		}
		if (fault?.kind === 'hang') {
			// Handled in full, never answered: the connection stays open until the client gives up
			// or the emulator closes.
			if (reply.body && typeof reply.body !== 'string' && !Buffer.isBuffer(reply.body)) reply.body.destroy();
			return;
		}
		if (fault?.kind === 'slow') {
			const timer = setTimeout(() => {
				this.timers.delete(timer);
				this.send(res, reply);
			}, fault.delayMs);
			this.timers.add(timer);
			return;
		}
		this.send(res, reply);
	}

	private async dispatch(
		req: IncomingMessage,
		url: URL,
		route: Route | undefined,
		pathKnown: boolean,
	): Promise<Reply> {
		if (!route) {
			await drainBody(req);
			return pathKnown ? message(405, MESSAGES.methodNotAllowed) : message(404, MESSAGES.notFound);
		}
		const auth = authenticate(header(req, 'authorization'), this.options.accounts);
		if (!auth) {
			await drainBody(req);
			this.store.stats.rejected401++;
			return denied();
		}
		const decision = this.store.buckets.take(auth.account.username, this.store.now());
		if (!decision.admitted) {
			await drainBody(req);
			this.store.stats.rejected429++;
			return this.rateLimited(decision.retryAfterMs);
		}
		this.store.notePeak(decision.level);
		const customer = resolveCustomer(
			auth.account,
			header(req, 'customerid'),
			header(req, 'customeridtype'),
			route.customerHeaders === 'required',
		);
		if (!customer.ok) {
			await drainBody(req);
			this.store.stats.rejected401++;
			return denied();
		}
		const match = route.pattern.exec(url.pathname) as RegExpExecArray;
		let params: string[];
		try {
			params = match.slice(1).map((p) => decodeURIComponent(p));
		} catch {
			await drainBody(req);
			return invalid();
		}
		const host = header(req, 'host');
		const context: RequestContext = {
			req,
			url,
			params,
			auth,
			customer: customer.customer,
			origin: host ? `http://${host}` : this.fallbackOrigin(),
		};
		const reply = await route.handle(context);
		await drainBody(req);
		return reply;
	}

	private rateLimited(retryAfterMs: number): Reply {
		const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
		const reply = message(this.options.rateLimitAnswer === '503' ? 503 : 429, MESSAGES.rateLimited);
		const headers = reply.headers as Record<string, string>;
		if (this.options.rateLimitAnswer === '429-date') {
			headers['Retry-After'] = new Date(this.store.now() + seconds * 1000).toUTCString();
		} else if (this.options.rateLimitAnswer !== '429-none') {
			headers['Retry-After'] = String(seconds);
		}
		return reply;
	}

	send(res: ServerResponse, reply: Reply): void {
		if (res.destroyed) return;
		const headers = { ...(reply.headers ?? {}) };
		const body = reply.body;
		if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) {
			const bytes = body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
			headers['Content-Length'] = String(bytes);
			res.writeHead(reply.status, headers);
			res.end(res.req.method === 'HEAD' ? undefined : body);
			return;
		}
		res.writeHead(reply.status, headers);
		body.on('error', () => res.destroy());
		body.pipe(res);
	}

	private async upload(context: RequestContext, route: UploadRoute): Promise<Reply> {
		const { req } = context;
		const id = randomUUID();
		const filePath = this.store.filePathFor(id);
		let received: { byteLength: number; body: Buffer | null };
		try {
			received = await receiveUpload(req, filePath, bufferConstants.MAX_STRING_LENGTH);
		} catch (error) {
			await rm(filePath, { force: true });
			throw error;
		}
		const { byteLength, body } = received;
		const customer = context.customer as EmulatorCustomer;
		const receivedAtMs = this.store.now();
		const errors: ProcessingError[] = [];
		let processingMs = this.options.processingMs;
		let imageUris: string[] = [];
		// A body too large for a V8 string is stored unchecked (body === null): no markers, no images.
		if (body !== null) {
			const decoded = byteLength > 0 ? decodeDocument(body) : null;
			const analysis = decoded
				? analyseDocument(decoded.text, this.options.environment, decoded.encodingProblem)
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
		const upload: UploadRecord = {
			id,
			username: context.auth.account.username,
			route,
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
		this.store.addUpload(upload);
		return text(202, id);
	}

	private uploadRecord(upload: UploadRecord, origin: string): Record<string, unknown> {
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
			errors: this.store.uploadState(upload) === 'failed' ? upload.errors : [],
		};
	}

	private listByDate(context: RequestContext): Reply {
		const [date] = context.params;
		if (!isValidDate(date)) return invalid();
		const customer = context.customer as EmulatorCustomer;
		const records = [...this.store.uploads.values()]
			.filter(
				(u) =>
					u.username === context.auth.account.username &&
					u.customer.serviceId === customer.serviceId &&
					new Date(u.receivedAtMs).toISOString().slice(0, 10) === date,
			)
			.sort((a, b) => a.receivedAtMs - b.receivedAtMs)
			.map((u) => this.uploadRecord(u, context.origin));
		if (this.options.listLayout === 'single' && records.length === 1) return json(200, records[0]);
		return json(200, records);
	}

	private me(context: RequestContext): Reply {
		const { account, index } = context.auth;
		const customer = context.customer ?? account.customers[0];
		return json(
			200,
			environmentInfo(account, index, customer, this.options.environment, this.store.now()),
		);
	}

	private session(context: RequestContext): UploadRecord | null {
		const [id] = context.params;
		if (!GUID.test(id)) return null;
		const upload = this.store.uploads.get(id.toLowerCase());
		return upload && upload.username === context.auth.account.username ? upload : null;
	}

	private done(context: RequestContext): Reply {
		const upload = this.session(context);
		if (!upload) return sessionNotFound();
		return json(200, this.store.uploadState(upload) !== 'processing');
	}

	private result(context: RequestContext): Reply {
		const upload = this.session(context);
		if (!upload) return sessionNotFound();
		const state = this.store.uploadState(upload);
		if (state === 'processing') return text(202, MESSAGES.processing);
		if (state === 'succeeded') return { status: 200 };
		const path = ERROR_DOCUMENT_PATH.replace('{id}', upload.id);
		const location = this.options.errorLocation === 'relative' ? path : `${context.origin}${path}`;
		return { status: 301, headers: { Location: location } };
	}

	private errorDocument(context: RequestContext): Reply {
		const upload = this.session(context);
		if (!upload) return sessionNotFound();
		const state = this.store.uploadState(upload);
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

	private file(context: RequestContext): Reply {
		const upload = this.session(context);
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

	private async uploadImages(context: RequestContext): Promise<Reply> {
		const { req, url } = context;
		const boundary = multipartBoundary(header(req, 'content-type'));
		const invertParam = url.searchParams.get('invert');
		const clippingPath = url.searchParams.get('clippingpath');
		const body = await readBody(req);
		if (!boundary) return invalid();
		if (invertParam !== null && !/^(true|false)$/i.test(invertParam)) return invalid();
		let files;
		try {
			files = parseMultipart(body, boundary).filter((p) => p.name === 'file');
		} catch (error) {
			if (error instanceof MultipartError) return invalid();
			throw error;
		}
		if (files.length === 0 || files.some((f) => f.data.length === 0)) return invalid();
		const invert = invertParam?.toLowerCase() === 'true';
		const stored = files.map((f) =>
			this.store.addImage(f.data, f.fileName, f.contentType, invert, clippingPath || null),
		);
		switch (this.options.imageUploadLayout) {
			case 'strings':
				return json(200, stored.map((i) => i.hashcode));
			case 'text':
				return text(200, stored.map((i) => i.hashcode).join('\n'));
			default:
				return json(
					200,
					stored.map((image, n) => ({ fileName: files[n].fileName, hashcode: image.hashcode, md5: image.md5 })),
				);
		}
	}

	private imageExists(context: RequestContext): Reply {
		const [hashcode] = context.params;
		return { status: this.store.findImage({ hashcode }) ? 200 : 404 };
	}

	private findImage(context: RequestContext): Reply {
		const md5 = context.url.searchParams.get('md5') || undefined;
		const uri = context.url.searchParams.get('uri') || undefined;
		if ((md5 === undefined) === (uri === undefined)) return invalid();
		const image = this.store.findImage(md5 !== undefined ? { md5 } : { uri });
		if (!image) return { status: 404 };
		switch (this.options.imageFindLayout) {
			case 'json-string':
				return json(200, image.hashcode);
			case 'object':
				return json(200, { hashcode: image.hashcode });
			default:
				return text(200, image.hashcode);
		}
	}
}
