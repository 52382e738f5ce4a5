import { createHash } from 'node:crypto';

import { request } from 'undici';

import { photoId, startShop, type Shop } from '../../scripts/shop';

interface Product {
	id: string;
	price: number;
	stock: number;
	updatedAt: string;
	photos: Array<{ url: string; updatedAt: string }>;
}

interface Page {
	products: Product[];
	page: number;
	total: number;
	next: string | null;
	changedUntil: string;
}

async function get(url: string, headers: Record<string, string> = {}) {
	const response = await request(url, { headers });
	const body = Buffer.from(await response.body.arrayBuffer());
	return { status: response.statusCode, headers: response.headers, body };
}

const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

async function pageAt(url: string): Promise<Page> {
	const response = await request(url);
	expect(response.statusCode).toBe(200);
	return (await response.body.json()) as Page;
}

/** The first page of the products changed after `since`. */
const changedSince = (shop: Shop, since: string) =>
	pageAt(`${shop.productsUrl}?updatedSince=${encodeURIComponent(since)}`);

const ids = (page: Page) => page.products.map((product) => product.id);

describe('the fixture shop', () => {
	let shop: Shop;

	beforeAll(async () => {
		shop = await startShop({ products: 5, pageSize: 2, photoBytes: 1000 });
	});

	afterAll(async () => {
		await shop?.close();
	});

	beforeEach(() => shop.resetStats());

	test('listens on loopback only and pages the products, two photo URLs each', async () => {
		expect(shop.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
		const pages: Page[] = [];
		for (let next: string | null = shop.productsUrl; next !== null; ) {
			const page = JSON.parse((await get(next)).body.toString('utf8')) as Page;
			pages.push(page);
			next = page.next;
		}
		expect(pages.map((page) => page.products.map((product) => product.id))).toEqual([
			['P00001', 'P00002'],
			['P00003', 'P00004'],
			['P00005'],
		]);
		expect(pages[0].total).toBe(5);
		expect(pages[0].products[0].photos).toEqual([
			{ url: `${shop.url}/photos/P00001-1.jpg`, updatedAt: '2026-01-01T00:00:00.000Z' },
			{ url: `${shop.url}/photos/P00001-2.jpg`, updatedAt: '2026-01-01T00:00:00.000Z' },
		]);
		expect(shop.stats().requests).toEqual({ 'GET /api/products': 3 });
	});

	test('a photo is the same bytes every time, JPEG-framed, with ETag and Last-Modified', async () => {
		const first = await get(`${shop.url}/photos/P00002-1.jpg`);
		const again = await get(`${shop.url}/photos/P00002-1.jpg`);
		const other = await get(`${shop.url}/photos/P00002-2.jpg`);
		expect(first.status).toBe(200);
		expect(first.body).toHaveLength(1000);
		expect([...first.body.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
		expect([...first.body.subarray(998)]).toEqual([0xff, 0xd9]);
		expect(first.headers).toMatchObject({
			'content-type': 'image/jpeg',
			etag: '"P00002-1-v1"',
			'last-modified': 'Thu, 01 Jan 2026 00:00:00 GMT',
		});
		expect(md5(again.body)).toBe(md5(first.body));
		expect(md5(other.body)).not.toBe(md5(first.body));
		expect(shop.stats()).toMatchObject({ photosSent: 3, notModified: 0, photoBytesSent: 3000 });
	});

	test('answers 304 to a conditional request while the photo is unchanged, the new photo once it changed', async () => {
		const url = `${shop.url}/photos/P00001-1.jpg`;
		const before = await get(url);
		const etag = String(before.headers.etag);
		const lastModified = String(before.headers['last-modified']);
		expect((await get(url, { 'if-none-match': etag })).status).toBe(304);
		expect((await get(url, { 'if-modified-since': lastModified })).status).toBe(304);
		expect((await get(url, { 'if-none-match': '"P00001-1-v0"' })).status).toBe(200);

		expect(shop.changePhotos(1)).toEqual(['P00001-1']);
		const changed = await get(url, { 'if-none-match': etag });
		expect(changed.status).toBe(200);
		expect(changed.headers.etag).toBe('"P00001-1-v2"');
		expect(md5(changed.body)).not.toBe(md5(before.body));
		expect((await get(url, { 'if-modified-since': lastModified })).status).toBe(200);
		const page = JSON.parse((await get(shop.productsUrl)).body.toString('utf8')) as Page;
		expect(page.products[0].photos[0].updatedAt).toBe('2026-01-02T00:00:00.000Z');
		expect(shop.stats()).toMatchObject({ photosSent: 4, notModified: 2 });
	});

	test('unknown photos and routes are 404', async () => {
		expect((await get(`${shop.url}/photos/P00006-1.jpg`)).status).toBe(404);
		expect((await get(`${shop.url}/photos/P00001-3.jpg`)).status).toBe(404);
		expect((await get(`${shop.url}/elsewhere`)).status).toBe(404);
		expect(shop.stats().requests).toEqual({ 'GET /photos/{photo}': 2, other: 1 });
	});

	test('from the 100,000th product on, ids have six digits, and their photos are served', async () => {
		const large = await startShop({ products: 100_000, pageSize: 500, photoBytes: 1000 });
		try {
			const last = (await (await request(`${large.productsUrl}?page=200`)).body.json()) as Page;
			const product = last.products.at(-1);
			expect(product?.id).toBe('P100000');
			expect(photoId(99_999, 1)).toBe('P100000-2');
			expect((await get(String(product?.photos[1].url))).status).toBe(200);
			// The same product with a zero too many is not it.
			expect((await get(`${large.url}/photos/P0100000-1.jpg`)).status).toBe(404);
		} finally {
			await large.close();
		}
	});

	test('its control routes give and clear the statistics, uncounted', async () => {
		await get(`${shop.url}/photos/P00001-1.jpg`);
		const stats = await get(`${shop.url}/__shop/stats`);
		expect(JSON.parse(stats.body.toString('utf8'))).toEqual({
			requests: { 'GET /photos/{photo}': 1 },
			photosSent: 1,
			notModified: 0,
			photoBytesSent: 1000,
			photosInFlight: 0,
			photosInFlightPeak: 1,
			photoBusyMs: expect.any(Number),
			photoRequestMs: expect.any(Number),
		});
		const reset = await request(`${shop.url}/__shop/reset-stats`, { method: 'POST' });
		await reset.body.dump();
		expect(reset.statusCode).toBe(200);
		expect(shop.stats()).toEqual({
			requests: {},
			photosSent: 0,
			notModified: 0,
			photoBytesSent: 0,
			photosInFlight: 0,
			photosInFlightPeak: 0,
			photoBusyMs: 0,
			photoRequestMs: 0,
		});
	});

	test('a missing photo is still listed with its product, and its URL answers 404', async () => {
		const gaps = await startShop({ products: 2, missingPhotos: ['P00002-1'] });
		try {
			const page = JSON.parse((await get(gaps.productsUrl)).body.toString('utf8')) as Page;
			expect(page.products[1].photos[0].url).toBe(`${gaps.url}/photos/P00002-1.jpg`);
			expect((await get(`${gaps.url}/photos/P00002-1.jpg`)).status).toBe(404);
			expect((await get(`${gaps.url}/photos/P00002-2.jpg`)).status).toBe(200);
		} finally {
			await gaps.close();
		}
	});
	test('a product without photos is listed with none, and no photo of it is served', async () => {
		const bare = await startShop({ products: 3, productsWithoutPhotos: ['P00002'] });
		try {
			const page = (await (await request(bare.productsUrl)).body.json()) as Page;
			expect(page.products.map((product) => product.photos.length)).toEqual([2, 0, 2]);
			expect((await get(`${bare.url}/photos/P00002-1.jpg`)).status).toBe(404);
			// Changed photos skip it.
			expect(bare.changePhotos(3)).toEqual(['P00001-1', 'P00001-2', 'P00003-1']);
		} finally {
			await bare.close();
		}
	});

	test('a failing page answers 503 until healed; the other pages are served meanwhile', async () => {
		shop.failPages([2]);
		try {
			expect((await get(`${shop.productsUrl}?page=2`)).status).toBe(503);
			expect((await get(`${shop.productsUrl}?page=1`)).status).toBe(200);
		} finally {
			shop.failPages([]);
		}
		expect((await get(`${shop.productsUrl}?page=2`)).status).toBe(200);
	});

	test('its change-photos control route gives photos a new version, uncounted; a count that is not a whole number from 1 is refused', async () => {
		const changing = await startShop({ products: 2, photoBytes: 1000 });
		try {
			const before = (await get(`${changing.url}/photos/P00001-2.jpg`)).body;
			changing.resetStats();
			const changed = await request(`${changing.url}/__shop/change-photos?count=2`, {
				method: 'POST',
			});
			expect(changed.statusCode).toBe(200);
			expect(await changed.body.json()).toEqual({ changed: ['P00001-1', 'P00001-2'] });
			for (const count of ['0', '1.5', 'x']) {
				const refused = await request(`${changing.url}/__shop/change-photos?count=${count}`, {
					method: 'POST',
				});
				await refused.body.dump();
				expect(refused.statusCode).toBe(400);
			}
			const page = JSON.parse((await get(changing.productsUrl)).body.toString('utf8')) as Page;
			expect(
				page.products.map((product) => product.photos.map((photo) => photo.updatedAt)),
			).toEqual([
				['2026-01-02T00:00:00.000Z', '2026-01-02T00:00:00.000Z'],
				['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z'],
			]);
			expect((await get(`${changing.url}/photos/P00001-2.jpg`)).body).not.toEqual(before);
			expect(changing.stats().requests).toEqual({
				'GET /api/products': 1,
				'GET /photos/{photo}': 1,
			});
		} finally {
			await changing.close();
		}
	});

	test('with a latency, the photo host holds every answer that long, for all requests side by side', async () => {
		const slow = await startShop({ products: 10, photosPerProduct: 1, photoLatencyMs: 100 });
		try {
			// The shop's count of photo requests in flight when each answer reached the client.
			const inFlightAtAnswers: number[] = [];
			const answers = await Promise.all(
				Array.from({ length: 10 }, async (_, index) => {
					const response = await request(`${slow.url}/photos/${photoId(index, 0)}.jpg`);
					inFlightAtAnswers.push(slow.stats().photosInFlightPeak);
					await response.body.dump();
					return response.statusCode;
				}),
			);
			expect(answers).toEqual(Array.from({ length: 10 }, () => 200));
			// No answer left before the tenth request arrived: each was held, and all at once.
			expect(inFlightAtAnswers[0]).toBe(10);
			const stats = slow.stats();
			expect(stats).toMatchObject({ photosSent: 10, photosInFlight: 0, photosInFlightPeak: 10 });
			// Ten requests overlapping: their time added up is several times the time the host was busy.
			expect(stats.photoRequestMs).toBeGreaterThan(2 * stats.photoBusyMs);
		} finally {
			await slow.close();
		}
	});

	test('one request at a time, a photo host with a latency is never busy with two', async () => {
		const slow = await startShop({ products: 3, photosPerProduct: 1, photoLatencyMs: 20 });
		try {
			for (let index = 0; index < 3; index++)
				await (await request(`${slow.url}/photos/${photoId(index, 0)}.jpg`)).body.dump();
			expect(slow.stats()).toMatchObject({ photosSent: 3, photosInFlightPeak: 1 });
		} finally {
			await slow.close();
		}
	});

	test('the product API has a latency of its own: a photo asked after a page is answered before it', async () => {
		const slowApi = await startShop({ products: 1, apiLatencyMs: 200 });
		try {
			const order: string[] = [];
			const page = request(slowApi.productsUrl).then(async (response) => {
				order.push('page');
				await response.body.dump();
			});
			const photo = request(`${slowApi.url}/photos/P00001-1.jpg`).then(async (response) => {
				order.push('photo');
				await response.body.dump();
			});
			await Promise.all([page, photo]);
			expect(order).toEqual(['photo', 'page']);
		} finally {
			await slowApi.close();
		}
	});

	test('without photo versions the products list bare URLs, and the ETag still answers 304', async () => {
		const bare = await startShop({ products: 1, photoVersions: false, photoBytes: 1000 });
		try {
			const page = JSON.parse((await get(bare.productsUrl)).body.toString('utf8')) as Page;
			expect(page.products[0].photos).toEqual([
				{ url: `${bare.url}/photos/P00001-1.jpg` },
				{ url: `${bare.url}/photos/P00001-2.jpg` },
			]);
			const url = `${bare.url}/photos/P00001-1.jpg`;
			const etag = String((await get(url)).headers.etag);
			expect((await get(url, { 'if-none-match': etag })).status).toBe(304);
		} finally {
			await bare.close();
		}
	});

	test('a changed product has another price and stock and a later updatedAt, and only it is listed as changed since a cursor', async () => {
		const changing = await startShop({ products: 5, photoBytes: 1000 });
		try {
			const before = await pageAt(changing.productsUrl);
			expect(before.changedUntil).toBe('2026-01-01T00:00:00.000Z');
			expect(before.products.map((product) => product.updatedAt)).toEqual(
				Array.from({ length: 5 }, () => '2026-01-01T00:00:00.000Z'),
			);
			// Nothing changed yet after the catalogue's own date; everything after a time before it.
			expect((await changedSince(changing, before.changedUntil)).total).toBe(0);
			expect((await changedSince(changing, '2025-12-31T23:00:00-01:00')).total).toBe(0);
			expect(ids(await changedSince(changing, '2025-12-31T23:59:59.999Z'))).toHaveLength(5);

			expect(changing.changeProducts(2, 1)).toEqual(['P00002', 'P00003']);
			const delta = await changedSince(changing, before.changedUntil);
			expect(ids(delta)).toEqual(['P00002', 'P00003']);
			expect(delta.total).toBe(2);
			expect(delta.next).toBeNull();
			expect(Date.parse(delta.changedUntil)).toBeGreaterThan(Date.parse(before.changedUntil));
			for (const [position, changed] of delta.products.entries()) {
				const old = before.products[position + 1];
				expect(changed.price).not.toBe(old.price);
				expect(changed.stock).not.toBe(old.stock);
				expect(changed.updatedAt).toBe(delta.changedUntil);
				expect(changed.photos).toEqual(old.photos);
			}
			const after = await pageAt(changing.productsUrl);
			for (const index of [0, 3, 4]) expect(after.products[index]).toEqual(before.products[index]);

			// A change right after a cursor was taken, within the same millisecond or not, is after it.
			changing.changeProducts(1);
			expect(ids(await changedSince(changing, delta.changedUntil))).toEqual(['P00001']);
		} finally {
			await changing.close();
		}
	});

	test('the products changed since a time are paged as the catalogue is, each next page keeping the time', async () => {
		const changing = await startShop({ products: 7, pageSize: 2 });
		try {
			const since = (await pageAt(changing.productsUrl)).changedUntil;
			expect(changing.changeProducts(5, 1)).toHaveLength(5);
			const pages: Page[] = [];
			let next: string | null = `${changing.productsUrl}?updatedSince=${since}&page=1`;
			while (next !== null) {
				const page = await pageAt(next);
				pages.push(page);
				next = page.next;
			}
			expect(pages.map(ids)).toEqual([['P00002', 'P00003'], ['P00004', 'P00005'], ['P00006']]);
			expect(pages.map((page) => [page.page, page.total])).toEqual([
				[1, 5],
				[2, 5],
				[3, 5],
			]);
			expect(new URL(String(pages[0].next)).searchParams.get('updatedSince')).toBe(since);
		} finally {
			await changing.close();
		}
	});

	test('a time to list the changed products since that is not an ISO time with its zone is refused with 400', async () => {
		for (const since of ['yesterday', '2026-01-01', '2026-01-01T00:00:00', '']) {
			const response = await request(
				`${shop.productsUrl}?updatedSince=${encodeURIComponent(since)}`,
			);
			expect(response.statusCode).toBe(400);
			expect(await response.body.json()).toEqual({
				message: expect.stringMatching(/^updatedSince must be an ISO 8601 time with its zone/),
			});
		}
	});

	test('its change-products control route gives products a new version, uncounted; a count or index out of range is refused', async () => {
		const changing = await startShop({ products: 5 });
		try {
			const before = await pageAt(changing.productsUrl);
			changing.resetStats();
			const change = async (query: string) => {
				const response = await request(`${changing.url}/__shop/change-products?${query}`, {
					method: 'POST',
				});
				return { status: response.statusCode, body: await response.body.json() };
			};
			expect(await change('count=2&from=3')).toEqual({
				status: 200,
				body: { changed: ['P00004', 'P00005'] },
			});
			expect(await change('count=1')).toEqual({ status: 200, body: { changed: ['P00001'] } });
			// The catalogue ends at P00005.
			expect(await change('count=3&from=4')).toEqual({
				status: 200,
				body: { changed: ['P00005'] },
			});
			for (const query of ['count=0', 'count=x', 'count=1&from=-1', 'count=1&from=1.5']) {
				expect((await change(query)).status).toBe(400);
			}
			expect(changing.stats().requests).toEqual({});
			expect(ids(await changedSince(changing, before.changedUntil))).toEqual([
				'P00001',
				'P00004',
				'P00005',
			]);
		} finally {
			await changing.close();
		}
	});

	test('a changed photo is a change of its product: listed as changed since before, its price and stock kept', async () => {
		const changing = await startShop({ products: 3, photoBytes: 1000 });
		try {
			const before = await pageAt(changing.productsUrl);
			expect(changing.changePhotos(3)).toEqual(['P00001-1', 'P00001-2', 'P00002-1']);
			const delta = await changedSince(changing, before.changedUntil);
			expect(ids(delta)).toEqual(['P00001', 'P00002']);
			for (const [position, changed] of delta.products.entries()) {
				expect(changed).toMatchObject({
					price: before.products[position].price,
					stock: before.products[position].stock,
					updatedAt: delta.changedUntil,
				});
			}
			expect(Date.parse(delta.changedUntil)).toBeGreaterThan(Date.parse(before.changedUntil));
		} finally {
			await changing.close();
		}
	});

	test('a latency that is not a whole number of milliseconds from 0 is refused', async () => {
		await expect(startShop({ photoLatencyMs: -1 })).rejects.toThrow(RangeError);
		await expect(startShop({ apiLatencyMs: 1.5 })).rejects.toThrow(RangeError);
	});
});
