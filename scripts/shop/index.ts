/**
 * A tiny shop for the nightly-sync example and its benchmark: a product API (paged JSON, two photo
 * URLs per product) and a photo host on the same loopback server, as a shop system and its media
 * server would serve them.
 *
 *   const shop = await startShop({ products: 10_000 });
 *   // GET  {shop.url}/api/products?page=1  -> { products, page, pageSize, total, next, changedUntil }
 *   // GET  {shop.url}/api/products?updatedSince=2026-01-01T00:00:00.000Z&page=1
 *   //                                      -> the same, of the products changed after that time
 *   // GET  {shop.url}/photos/P00001-1.jpg  -> 20 KB of JPEG-like bytes, ETag, Last-Modified
 *   shop.changePhotos(200);                 // the first 200 photos get a new version
 *   shop.changeProducts(50, 1000);          // products 1001 to 1050 get a new version (price, stock)
 *   shop.failPages([2]);                    // page 2 answers 503 until failPages([])
 *   shop.stats();                           // requests per route, photos sent, 304s, photos in flight
 *   await shop.close();
 *
 * A photo's bytes depend only on its id and version, so every run of a benchmark sees the same
 * photos, and a changed photo has new bytes (a new md5); a product's price and stock depend only on
 * its place in the catalogue and its version. The photo host answers conditional requests
 * (If-None-Match, If-Modified-Since) with 304 while the photo is unchanged. A latency setting holds
 * every answer of the photo host (and, apart, of the product API) that long before its headers, as a
 * shop or CDN across a real network does; the statistics then say how many photo requests the host
 * held side by side, which is what a client fetching photos in parallel saves. It listens on 127.0.0.1
 * only and holds nothing on disk: closing it (or the process ending) is all there is to stop. A
 * process of its own (`npm run shop`, ./cli.ts) gives its statistics through its control routes.
 *
 * For clients that ask only for what changed since their last visit (`updatedSince`, a delta feed),
 * a product's `updatedAt` is when it last changed, itself or a photo of it, by the shop's own clock:
 * the catalogue is dated 2026-01-01 as the shop starts, and each changeProducts or changePhotos
 * stamps the products it changed with now, or 1 ms after the previous stamp if that is later. Stamps
 * only grow, so a change is after every cursor a client took before it, even within a millisecond.
 * Every answer's `changedUntil` is the newest stamp when it was answered: a client keeps its first
 * page's as its next `updatedSince`, and a product changed while it pages comes again next time
 * rather than never. A photo's own `updatedAt` is not that clock but its version's fixed date (also
 * its Last-Modified), one day a version from 2026-01-01, the same in every run.
 */
import { createCipheriv, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ShopOptions {
	/** Products in the catalogue (default 20). */
	products?: number;
	/** Photos per product (default 2). */
	photosPerProduct?: number;
	/** Size of every photo in bytes (default 20,000). */
	photoBytes?: number;
	/** Products per page of the product API (default 500). */
	pageSize?: number;
	/** Photos still listed with their products but gone from the photo host (404), e.g. `P00003-2`. */
	missingPhotos?: string[];
	/** Products listed without a photo (and none served for them), e.g. `P00005`. */
	productsWithoutPhotos?: string[];
	/**
	 * Whether the product API gives each photo's version (`updatedAt`, default true). Without it, the
	 * host's ETag and Last-Modified are all a client has to tell a changed photo: conditional requests.
	 */
	photoVersions?: boolean;
	/** Milliseconds every answer of the photo host waits before its headers (default 0). */
	photoLatencyMs?: number;
	/** Milliseconds every answer of the product API waits before its headers (default 0). */
	apiLatencyMs?: number;
	/** Port on 127.0.0.1; 0 (default) takes a free one. */
	port?: number;
}

export interface ShopStats {
	/** Requests per route: `GET /api/products`, `GET /photos/{photo}`, `other`. */
	requests: Record<string, number>;
	/** Photo requests answered with the photo (200). */
	photosSent: number;
	/** Photo requests answered 304 Not Modified. */
	notModified: number;
	/** Bytes of photos sent. */
	photoBytesSent: number;
	/** Photo requests being answered now (arrived, their answer not yet ended). */
	photosInFlight: number;
	/** The most photo requests the host was answering at one time. */
	photosInFlightPeak: number;
	/** Milliseconds during which at least one photo request was in flight: what a client waited. */
	photoBusyMs: number;
	/**
	 * Milliseconds of all photo requests added up, each from its arrival to the end of its answer;
	 * over photoBusyMs, the mean number in flight while the host was busy.
	 */
	photoRequestMs: number;
}

export interface Shop {
	/** e.g. `http://127.0.0.1:40123` (no trailing slash). */
	url: string;
	/** The first page of the product API. */
	productsUrl: string;
	options: Required<Omit<ShopOptions, 'port' | 'missingPhotos' | 'productsWithoutPhotos'>>;
	stats(): ShopStats;
	/** Clears the statistics; the photos keep their versions. */
	resetStats(): void;
	/**
	 * Gives the first `count` photos (in catalogue order) a new version, and their products a new
	 * `updatedAt`; the photos' ids.
	 */
	changePhotos(count: number): string[];
	/**
	 * Gives `count` products from catalogue index `from` (0: the first) a new version: a new price and
	 * stock, and a new `updatedAt`; their ids (fewer at the end of the catalogue).
	 */
	changeProducts(count: number, from?: number): string[];
	/**
	 * From now on the product API answers these pages with 503, as a shop that is down for part of
	 * a night does; `failPages([])` heals it.
	 */
	failPages(pages: number[]): void;
	close(): Promise<void>;
}

/**
 * The port of the shop examples/nightly-sync.json and nightly-sync-page.json read, on 127.0.0.1
 * (`npm run shop` and `npm start` serve it there unless told otherwise).
 */
export const EXAMPLE_SHOP_PORT = 8472;
export const EXAMPLE_SHOP_HOST = `127.0.0.1:${EXAMPLE_SHOP_PORT}`;
export const PRODUCTS_PATH = '/api/products';
export const PHOTOS_PATH = '/photos/';
/**
 * Not counted: `GET /__shop/stats` answers stats(), `POST /__shop/reset-stats` is resetStats(),
 * `POST /__shop/change-photos?count=N` is changePhotos(N) and
 * `POST /__shop/change-products?count=N&from=K` is changeProducts(N, K) (both answer
 * `{ changed: ids }`), for a shop in a process of its own.
 */
export const SHOP_CONTROL_PREFIX = '/__shop/';

const MAX_PAGE_SIZE = 1000;
const PHOTO_ROUTE = `GET ${PHOTOS_PATH}{photo}`;
// Photo versions are dated from here, one day per version: fixed, so Last-Modified is the same in
// every run. The catalogue is dated here too as the shop starts, for its delta feed.
const FIRST_VERSION_AT = Date.UTC(2026, 0, 1);
const DAY_MS = 86_400_000;
// An ISO 8601 time with its zone: without one, it would be read in the server's own time zone.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/;
// SOI, then an APP0 segment announcing JFIF: what a JPEG starts with.
const JPEG_HEADER = Buffer.from([
	0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01,
	0x00, 0x01, 0x00, 0x00,
]);
const JPEG_END = Buffer.from([0xff, 0xd9]);

function positiveInteger(name: string, value: number): number {
	if (!Number.isInteger(value) || value <= 0)
		throw new RangeError(`${name} must be a positive integer, got ${value}`);
	return value;
}

function milliseconds(name: string, value: number): number {
	if (!Number.isInteger(value) || value < 0)
		throw new RangeError(`${name} must be a whole number of milliseconds from 0, got ${value}`);
	return value;
}

export function productId(index: number): string {
	return `P${String(index + 1).padStart(5, '0')}`;
}

export function photoId(productIndex: number, photoIndex: number): string {
	return `${productId(productIndex)}-${photoIndex + 1}`;
}

/**
 * The bytes of a photo at a version: a JPEG header and end marker around a keystream keyed by id
 * and version (AES-CTR: deterministic, and fast enough for 20,000 photos a night).
 */
export function photoBytes(id: string, version: number, size: number): Buffer {
	if (size < JPEG_HEADER.length + JPEG_END.length)
		throw new RangeError(`A photo needs at least ${JPEG_HEADER.length + JPEG_END.length} bytes`);
	const key = createHash('md5').update(`${id}:${version}`).digest();
	const body = createCipheriv('aes-128-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(size));
	JPEG_HEADER.copy(body, 0);
	JPEG_END.copy(body, size - JPEG_END.length);
	return body;
}

function versionDate(version: number): Date {
	return new Date(FIRST_VERSION_AT + (version - 1) * DAY_MS);
}

/** Milliseconds since the epoch of an ISO 8601 time with its zone; NaN for anything else. */
function isoTime(text: string): number {
	return ISO_TIME.test(text) ? Date.parse(text) : Number.NaN;
}

export async function startShop(options: ShopOptions = {}): Promise<Shop> {
	const resolved = {
		products: positiveInteger('products', options.products ?? 20),
		photosPerProduct: positiveInteger('photosPerProduct', options.photosPerProduct ?? 2),
		photoBytes: positiveInteger('photoBytes', options.photoBytes ?? 20_000),
		pageSize: Math.min(positiveInteger('pageSize', options.pageSize ?? 500), MAX_PAGE_SIZE),
		photoVersions: options.photoVersions ?? true,
		photoLatencyMs: milliseconds('photoLatencyMs', options.photoLatencyMs ?? 0),
		apiLatencyMs: milliseconds('apiLatencyMs', options.apiLatencyMs ?? 0),
	};
	const missing = new Set(options.missingPhotos ?? []);
	const withoutPhotos = new Set(options.productsWithoutPhotos ?? []);
	const photosOf = (index: number) =>
		withoutPhotos.has(productId(index)) ? 0 : resolved.photosPerProduct;
	const versions = new Map<string, number>();
	const versionOf = (id: string) => versions.get(id) ?? 1;
	const productVersions = new Map<number, number>();
	const productVersionOf = (index: number) => productVersions.get(index) ?? 1;
	// The shop's change clock (see the header): each changed product's last stamp, and the newest.
	const changedAt = new Map<number, number>();
	let changedUntil = FIRST_VERSION_AT;
	let failingPages = new Set<number>();
	let stats = noStats(0);
	// When the photo host last went from idle to busy (or the statistics were cleared while busy).
	let busySince = 0;
	const resetStats = () => {
		stats = noStats(stats.photosInFlight);
		busySince = performance.now();
	};
	const count = (route: string) => {
		stats.requests[route] = (stats.requests[route] ?? 0) + 1;
	};

	let url = '';

	/** Product `index` of the catalogue as the product API lists it. */
	function product(index: number) {
		const photos = Array.from({ length: photosOf(index) }, (_, photoIndex) => {
			const id = photoId(index, photoIndex);
			const photoUrl = `${url}${PHOTOS_PATH}${id}.jpg`;
			return resolved.photoVersions
				? { url: photoUrl, updatedAt: versionDate(versionOf(id)).toISOString() }
				: { url: photoUrl };
		});
		// Moved on by each version, so that a changed product has another price and stock.
		const shifted = index + productVersionOf(index) - 1;
		return {
			id: productId(index),
			name: `Product ${index + 1}`,
			price: Math.round(((shifted % 997) + 1) * 1.37 * 100) / 100,
			stock: shifted % 50,
			updatedAt: new Date(changedAt.get(index) ?? FIRST_VERSION_AT).toISOString(),
			photos,
		};
	}

	/**
	 * The catalogue indexes of the products changed after `since`, in catalogue order; undefined for
	 * the whole catalogue.
	 */
	function listedAfter(since: number | undefined): number[] | undefined {
		if (since === undefined || since < FIRST_VERSION_AT) return undefined;
		return [...changedAt]
			.filter(([, at]) => at > since)
			.map(([index]) => index)
			.sort((a, b) => a - b);
	}

	function productsPage(res: ServerResponse, query: URLSearchParams): void {
		const page = Number(query.get('page') ?? '1');
		if (!Number.isInteger(page) || page < 1) {
			sendJson(res, 400, { message: 'page must be a whole number from 1' });
			return;
		}
		const updatedSince = query.get('updatedSince');
		const since = updatedSince === null ? undefined : isoTime(updatedSince);
		if (Number.isNaN(since)) {
			sendJson(res, 400, {
				message: `updatedSince must be an ISO 8601 time with its zone, e.g. 2026-01-01T00:00:00.000Z (a + in a query reads as a space: %2B), got "${updatedSince}"`,
			});
			return;
		}
		if (failingPages.has(page)) {
			sendJson(res, 503, { message: 'The shop is unavailable, try again later' });
			return;
		}
		const listed = listedAfter(since);
		const total = listed?.length ?? resolved.products;
		const first = (page - 1) * resolved.pageSize;
		const last = Math.min(first + resolved.pageSize, total);
		const products = [];
		for (let position = first; position < last; position++)
			products.push(product(listed === undefined ? position : listed[position]));
		const nextQuery = new URLSearchParams(updatedSince === null ? {} : { updatedSince });
		nextQuery.set('page', String(page + 1));
		sendJson(res, 200, {
			products,
			page,
			pageSize: resolved.pageSize,
			total,
			next: last < total ? `${url}${PRODUCTS_PATH}?${nextQuery}` : null,
			changedUntil: new Date(changedUntil).toISOString(),
		});
	}

	/** Counts a photo request in flight from now until its answer ends (or the client leaves). */
	function inFlight(res: ServerResponse): void {
		const arrived = performance.now();
		if (stats.photosInFlight === 0) busySince = arrived;
		stats.photosInFlight++;
		stats.photosInFlightPeak = Math.max(stats.photosInFlightPeak, stats.photosInFlight);
		res.once('close', () => {
			const ended = performance.now();
			stats.photoRequestMs += ended - Math.max(arrived, busySince);
			stats.photosInFlight = Math.max(0, stats.photosInFlight - 1);
			if (stats.photosInFlight === 0) stats.photoBusyMs += ended - busySince;
		});
	}

	function photo(req: IncomingMessage, res: ServerResponse, file: string): void {
		// Product ids have five digits or more (P00001, P100000).
		const match = /^(P(\d{5,})-(\d+))\.jpg$/.exec(file);
		const productIndex = match ? Number(match[2]) - 1 : -1;
		const photoIndex = match ? Number(match[3]) - 1 : -1;
		if (
			!match ||
			productId(productIndex) !== `P${match[2]}` ||
			productIndex < 0 ||
			productIndex >= resolved.products ||
			photoIndex < 0 ||
			photoIndex >= photosOf(productIndex) ||
			missing.has(match[1])
		) {
			sendJson(res, 404, { message: 'No such photo' });
			return;
		}
		const id = match[1];
		const version = versionOf(id);
		const etag = `"${id}-v${version}"`;
		const modified = versionDate(version);
		const headers = { etag, 'last-modified': modified.toUTCString() };
		if (unchanged(req, etag, modified)) {
			stats.notModified++;
			res.writeHead(304, headers).end();
			return;
		}
		const body = photoBytes(id, version, resolved.photoBytes);
		stats.photosSent++;
		stats.photoBytesSent += body.length;
		res
			.writeHead(200, { ...headers, 'content-type': 'image/jpeg', 'content-length': body.length })
			.end(body);
	}

	/** Dates a change of these products by the shop's clock: later than any change before it. */
	function stampChanged(indexes: number[]): void {
		if (indexes.length === 0) return;
		changedUntil = Math.max(Date.now(), changedUntil + 1);
		for (const index of indexes) changedAt.set(index, changedUntil);
	}

	function changePhotos(changed: number): string[] {
		positiveInteger('count', changed);
		const ids: string[] = [];
		const products: number[] = [];
		for (let index = 0; index < resolved.products && ids.length < changed; index++) {
			if (photosOf(index) > 0) products.push(index);
			for (let photoIndex = 0; photoIndex < photosOf(index) && ids.length < changed; photoIndex++) {
				const id = photoId(index, photoIndex);
				versions.set(id, versionOf(id) + 1);
				ids.push(id);
			}
		}
		stampChanged(products);
		return ids;
	}

	function changeProducts(changed: number, from = 0): string[] {
		positiveInteger('count', changed);
		if (!Number.isInteger(from) || from < 0)
			throw new RangeError(`from must be a catalogue index from 0, got ${from}`);
		const indexes: number[] = [];
		for (let index = from; index < Math.min(from + changed, resolved.products); index++) {
			productVersions.set(index, productVersionOf(index) + 1);
			indexes.push(index);
		}
		stampChanged(indexes);
		return indexes.map(productId);
	}

	const server = createServer((req, res) => {
		const target = new URL(req.url ?? '/', 'http://shop.invalid');
		if (req.method === 'GET' && target.pathname === `${SHOP_CONTROL_PREFIX}stats`) {
			sendJson(res, 200, stats);
		} else if (req.method === 'POST' && target.pathname === `${SHOP_CONTROL_PREFIX}reset-stats`) {
			resetStats();
			sendJson(res, 200, stats);
		} else if (req.method === 'POST' && target.pathname === `${SHOP_CONTROL_PREFIX}change-photos`) {
			answerChanged(res, () => changePhotos(Number(target.searchParams.get('count'))));
		} else if (
			req.method === 'POST' &&
			target.pathname === `${SHOP_CONTROL_PREFIX}change-products`
		) {
			const query = target.searchParams;
			answerChanged(res, () =>
				changeProducts(Number(query.get('count')), Number(query.get('from') ?? 0)),
			);
		} else if (req.method === 'GET' && target.pathname === PRODUCTS_PATH) {
			count(`GET ${PRODUCTS_PATH}`);
			later(resolved.apiLatencyMs, () => productsPage(res, target.searchParams));
		} else if (req.method === 'GET' && target.pathname.startsWith(PHOTOS_PATH)) {
			count(PHOTO_ROUTE);
			inFlight(res);
			later(resolved.photoLatencyMs, () =>
				photo(req, res, target.pathname.slice(PHOTOS_PATH.length)),
			);
		} else {
			count('other');
			sendJson(res, 404, { message: 'Not found' });
		}
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
	});
	url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

	return {
		url,
		productsUrl: `${url}${PRODUCTS_PATH}`,
		options: resolved,
		stats: () => structuredClone(stats),
		resetStats,
		changePhotos,
		changeProducts,
		failPages: (pages) => {
			failingPages = new Set(pages);
		},
		close: () =>
			new Promise<void>((resolve, reject) => {
				server.close((error) => (error ? reject(error) : resolve()));
				server.closeAllConnections();
			}),
	};
}

function noStats(photosInFlight: number): ShopStats {
	return {
		requests: {},
		photosSent: 0,
		notModified: 0,
		photoBytesSent: 0,
		photosInFlight,
		photosInFlightPeak: photosInFlight,
		photoBusyMs: 0,
		photoRequestMs: 0,
	};
}

/** Answers a change control route with the ids it changed, or 400 for arguments out of range. */
function answerChanged(res: ServerResponse, change: () => string[]): void {
	let changed: string[];
	try {
		changed = change();
	} catch (error) {
		if (!(error instanceof RangeError)) throw error;
		sendJson(res, 400, { message: error.message });
		return;
	}
	sendJson(res, 200, { changed });
}

/** Runs `answer` after `delayMs` (at once for 0), as a host across a network answers. */
function later(delayMs: number, answer: () => void): void {
	if (delayMs === 0) answer();
	else setTimeout(answer, delayMs);
}

/** Whether a conditional request names the photo's current version (RFC 9110, 13.1.2 and 13.2.2). */
function unchanged(req: IncomingMessage, etag: string, modified: Date): boolean {
	const ifNoneMatch = req.headers['if-none-match'];
	if (ifNoneMatch !== undefined) {
		return ifNoneMatch
			.split(',')
			.map((tag) => tag.trim().replace(/^W\//, ''))
			.some((tag) => tag === '*' || tag === etag);
	}
	const since = Date.parse(req.headers['if-modified-since'] ?? '');
	// HTTP dates have whole seconds.
	return Number.isFinite(since) && Math.floor(modified.getTime() / 1000) * 1000 <= since;
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
	const body = JSON.stringify(value);
	res
		.writeHead(status, {
			'content-type': 'application/json; charset=utf-8',
			'content-length': Buffer.byteLength(body),
		})
		.end(body);
}
