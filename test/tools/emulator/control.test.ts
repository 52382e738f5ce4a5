import { request } from 'undici';

import { call, multipart, putXml } from '../../../scripts/emulator/client';
import { startEmulator, type Emulator } from '../../../scripts/emulator';

let emulator: Emulator;

beforeEach(async () => {
	emulator = await startEmulator();
});

afterEach(() => emulator.close());

function control(path: string, body?: unknown) {
	return call(emulator, body === undefined ? 'GET' : 'POST', `/__emulator/${path}`, {
		auth: false,
		customer: false,
		headers: { 'content-type': 'application/json' },
		body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
	});
}

const me = () => call(emulator, 'GET', '/api/auth/me');

describe('faults', () => {
	it('answers the next requests with 500, then recovers', async () => {
		expect((await control('faults', { count: 2, kind: '500' })).json()).toEqual({ pending: 2 });
		const first = await me();
		expect(first.status).toBe(500);
		expect(first.json()).toEqual({ message: expect.any(String) });
		expect((await me()).status).toBe(500);
		expect((await me()).status).toBe(200);
		expect(emulator.stats()).toMatchObject({ faults: 2, requests: { 'GET /api/auth/me': 3 } });
	});

	it('answers 503 without Retry-After, so it is not mistaken for the rate limit', async () => {
		await control('faults', { count: 1, kind: '503' });
		const response = await putXml(emulator, '<Products/>');
		expect(response.status).toBe(503);
		expect(response.headers['retry-after']).toBeUndefined();
		expect(emulator.stats()).toMatchObject({ uploads: 0, rejected429: 0 });
	});

	it('answers 503 with Retry-After when asked, in the words of an unavailable service', async () => {
		await control('faults', { count: 1, kind: '503', retryAfter: '7' });
		const response = await putXml(emulator, '<Products/>');
		expect(response.status).toBe(503);
		expect(response.headers['retry-after']).toBe('7');
		expect(response.text).toBe('The service is temporarily unavailable.');
		expect(emulator.stats()).toMatchObject({ uploads: 0 });
	});

	it('applies a fault only to paths starting with its path', async () => {
		await control('faults', { count: 1, kind: '500', path: '/api/images' });
		expect((await me()).status).toBe(200);
		const form = multipart([{ data: 'image bytes' }]);
		const upload = await call(emulator, 'POST', '/api/images', {
			headers: { 'content-type': form.contentType },
			body: form.body,
		});
		expect(upload.status).toBe(500);
		expect(emulator.stats().images).toBe(0);
		expect((await me()).status).toBe(200);
	});

	it('resets the connection after an upload was received and processed', async () => {
		await control('faults', { count: 1, kind: 'reset', path: '/api/xml' });
		await expect(putXml(emulator, '<Products><Product id="1"/></Products>')).rejects.toThrow();
		const uploads = emulator.uploads();
		expect(uploads).toHaveLength(1);
		expect(uploads[0].byteLength).toBe('<Products><Product id="1"/></Products>'.length);
		expect((await putXml(emulator, '<Products/>')).status).toBe(202);
	});

	it('resets the connection of a GET', async () => {
		await control('faults', { count: 1, kind: 'reset' });
		await expect(me()).rejects.toMatchObject({
			code: expect.stringMatching(/ECONNRESET|UND_ERR_SOCKET/),
		});
		expect((await me()).status).toBe(200);
	});

	it('delays a slow answer and then answers normally', async () => {
		await control('faults', { count: 1, kind: 'slow', delayMs: 1500 });
		const order: string[] = [];
		const slow = me().then((r) => {
			order.push('slow');
			return r;
		});
		const quick = await me();
		order.push('quick');
		expect(quick.status).toBe(200);
		expect((await slow).status).toBe(200);
		expect(order).toEqual(['quick', 'slow']);
	});

	it('drops a slow answer still pending when the emulator closes', async () => {
		await control('faults', { count: 1, kind: 'slow', delayMs: 60_000 });
		const pending = me();
		// The request has arrived once the fault has been counted.
		while (emulator.stats().faults === 0) await new Promise((resolve) => setImmediate(resolve));
		await emulator.close();
		await expect(pending).rejects.toThrow();
	});

	it('rejects malformed fault definitions', async () => {
		for (const body of [
			{ count: 0, kind: '500' },
			{ count: 1, kind: '404' },
			{ count: 1, kind: 'slow', delayMs: -1 },
			{ count: 1, kind: '500', path: 'api' },
			'not json',
			[1],
		]) {
			const response = await control('faults', body);
			expect(response.status).toBe(400);
			expect(response.json()).toEqual({ message: expect.any(String) });
		}
	});
});

describe('control routes', () => {
	it('are neither authenticated, throttled, faulted nor counted', async () => {
		await emulator.close();
		emulator = await startEmulator({ bucketCapacity: 1 });
		await control('faults', { count: 5, kind: '500' });
		for (let i = 0; i < 5; i++) expect((await control('stats')).status).toBe(200);
		expect((await control('stats')).json()).toEqual({
			requests: {},
			rejected429: 0,
			peakBucketLevel: 0,
			uploads: 0,
			images: 0,
			rejected401: 0,
			faults: 0,
			rejected413: 0,
		});
	});

	it('reset clears uploads, images, buckets, faults and statistics', async () => {
		const id = (await putXml(emulator, '<Products/>')).text;
		const form = multipart([{ data: 'image' }]);
		const [image] = (
			await call(emulator, 'POST', '/api/images', {
				headers: { 'content-type': form.contentType },
				body: form.body,
			})
		).json<Array<{ md5: string }>>();
		await control('faults', { count: 3, kind: '500', path: '/api/never' });
		await control('bucket', { username: 'demo-integration', level: 50 });

		const reset = await control('reset', {});
		expect(reset.status).toBe(200);
		expect(emulator.stats()).toEqual({
			requests: {},
			rejected429: 0,
			peakBucketLevel: 0,
			uploads: 0,
			images: 0,
			rejected401: 0,
			faults: 0,
			rejected413: 0,
		});
		expect(emulator.uploads()).toEqual([]);
		expect(emulator.images()).toEqual([]);
		expect((await call(emulator, 'GET', `/api/status/${id}/done`)).status).toBe(404);
		expect((await call(emulator, 'GET', `/api/images?md5=${image.md5}`)).status).toBe(404);
		expect((await call(emulator, 'GET', '/api/never')).status).toBe(404);
	});

	it('reports statistics per route template', async () => {
		const id = (await putXml(emulator, '<Products/>')).text;
		await call(emulator, 'GET', `/api/status/${id}/done`);
		await call(emulator, 'GET', `/api/status/${id}/result`);
		await call(emulator, 'GET', '/api/xml/2025-01-01');
		await call(emulator, 'HEAD', '/api/images/abc');
		const stats = (await control('stats')).json<{
			requests: Record<string, number>;
			uploads: number;
			peakBucketLevel: number;
		}>();
		expect(stats.requests).toEqual({
			'PUT /api/xml': 1,
			'GET /api/status/{id}/done': 1,
			'GET /api/status/{id}/result': 1,
			'GET /api/xml/{date}': 1,
			'HEAD /api/images/{hashcode}': 1,
		});
		expect(stats.uploads).toBe(1);
		expect(stats.peakBucketLevel).toBe(5);
	});

	it('lists uploads and images for inspection', async () => {
		const id = (
			await putXml(
				emulator,
				'<Products><Image>https://cdn.example.com/a.png</Image></Products>',
				'/api/xml/custom',
			)
		).text;
		const uploads = (await control('uploads')).json<Array<Record<string, unknown>>>();
		expect(uploads).toEqual([
			expect.objectContaining({
				id,
				route: 'custom',
				username: 'demo-integration',
				customerServiceId: 1001,
				state: 'succeeded',
				imageUris: 1,
				checked: true,
			}),
		]);
		const images = (await control('images')).json<Array<Record<string, unknown>>>();
		expect(images).toEqual([
			expect.objectContaining({
				uris: ['https://cdn.example.com/a.png'],
				md5: null,
				sessions: [id],
			}),
		]);
	});

	it('switches to a manual clock, advances it and returns to the real clock', async () => {
		const set = await control('clock', { set: '2030-01-02T03:04:05.000Z' });
		expect(set.json()).toEqual({ now: '2030-01-02T03:04:05.000+00:00' });
		const id = (await putXml(emulator, '<!--emulator:processing-ms=60000--><Products/>')).text;
		const [record] = (await call(emulator, 'GET', '/api/xml/2030-01-02')).json<
			Array<{ receivedAt: string }>
		>();
		expect(record.receivedAt).toBe('2030-01-02T03:04:05.000+00:00');
		expect((await call(emulator, 'GET', `/api/status/${id}/done`)).json()).toBe(false);
		expect((await control('clock', { advanceMs: 60_000 })).json()).toEqual({
			now: '2030-01-02T03:05:05.000+00:00',
		});
		expect((await call(emulator, 'GET', `/api/status/${id}/done`)).json()).toBe(true);

		const before = Date.now();
		const real = (await control('clock', { real: true })).json<{ now: string }>();
		expect(Date.parse(real.now)).toBeGreaterThanOrEqual(before);
		expect(Date.parse(real.now)).toBeLessThan(Date.parse('2030-01-01T00:00:00Z'));
		for (const bad of [{}, { set: 'yesterday' }, { advanceMs: 'x' }])
			expect((await control('clock', bad)).status).toBe(400);
	});

	it('answers 404 for unknown control routes', async () => {
		expect((await control('nothing', {})).status).toBe(404);
		expect((await control('reset')).status).toBe(404);
	});

	it('does not leave a server listening after close', async () => {
		const url = emulator.url;
		await emulator.close();
		await expect(request(`${url}/__emulator/stats`)).rejects.toThrow();
	});
});
