import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';

import { request } from 'undici';

import { basic, call, multipart, NORTH, putXml, today } from '../../../scripts/emulator/client';
import {
	DEFAULT_ACCOUNT,
	startEmulator,
	type Emulator,
	type EmulatorAccount,
	type EmulatorOptions,
} from '../../../scripts/emulator';

const INVALID = { message: 'The request is invalid.' };
const DENIED = { message: 'Authorization has been denied for this request.' };
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const START = Date.parse('2025-03-14T10:00:00.000Z');

const OTHER_ACCOUNT: EmulatorAccount = {
	username: 'other-integration',
	password: 'other-password',
	customers: [{ serviceId: 2001, externalId: 'OTHER', name: 'Other Shop' }],
};

let emulator: Emulator;
let clock: number;

async function start(options: EmulatorOptions = {}): Promise<Emulator> {
	await emulator?.close();
	clock = START;
	emulator = await startEmulator({
		now: () => clock,
		accounts: [DEFAULT_ACCOUNT, OTHER_ACCOUNT],
		...options,
	});
	return emulator;
}

afterEach(async () => {
	await emulator?.close();
});

const PRODUCTS =
	'<?xml version="1.0" encoding="UTF-8"?><Products><Product id="A1"><Name>Chair</Name></Product></Products>';

describe('document upload', () => {
	beforeEach(() => start());

	it.each(['/api/xml', '/api/xml/custom'])(
		'PUT %s answers 202 with a session id as plain text',
		async (path) => {
			const response = await putXml(emulator, PRODUCTS, path);
			expect(response.status).toBe(202);
			expect(response.headers['content-type']).toMatch(/^text\/plain/);
			expect(response.text).toMatch(GUID);
			const [upload] = emulator.uploads();
			expect(upload).toMatchObject({
				id: response.text,
				route: path.endsWith('custom') ? 'custom' : 'xml',
			});
			expect(emulator.stats().uploads).toBe(1);
		},
	);

	it.each([
		['not XML at all', 'hello'],
		['an unclosed element', '<Products><Product></Products>'],
		['a repeated attribute', '<Products a="1" a="2"/>'],
		['two root elements', '<Products/><Products/>'],
		['only whitespace', '   \n'],
	])('rejects %s with 400 and the fixed message', async (_name, body) => {
		for (const path of ['/api/xml', '/api/xml/custom']) {
			const response = await putXml(emulator, body, path);
			expect(response.status).toBe(400);
			expect(response.json()).toEqual(INVALID);
		}
		expect(emulator.stats().uploads).toBe(0);
	});

	it('rejects an empty body with 400', async () => {
		const response = await putXml(emulator, '');
		expect(response.status).toBe(400);
		expect(response.json()).toEqual(INVALID);
	});

	it('stores the file and serves it at the absolute file URL of the record', async () => {
		const xml = '<Products><Product id="Ø1"><Name>Blåbær</Name></Product></Products>';
		const id = (await putXml(emulator, xml)).text;
		const [record] = (await call(emulator, 'GET', `/api/xml/${today(emulator)}`)).json<
			Array<Record<string, unknown>>
		>();
		expect(record.id).toBe(id);
		expect(record.fileLenght).toBe(Buffer.byteLength(xml));
		expect(record.file).toBe(`${emulator.url}/api/files/${id}`);
		const file = await call(emulator, 'GET', new URL(record.file as string).pathname);
		expect(file.status).toBe(200);
		expect(file.text).toBe(xml);
		expect(file.headers['content-type']).toBe('application/xml');
		expect(
			(await call(emulator, 'GET', new URL(record.file as string).pathname, { auth: false }))
				.status,
		).toBe(401);
	});

	it('accepts a streamed (chunked) upload of several megabytes', async () => {
		const chunk = '<Product id="X"><Name>A fairly ordinary product name</Name></Product>\n'.repeat(
			2000,
		);
		const count = 60;
		async function* body() {
			yield '<Products>';
			for (let i = 0; i < count; i++) yield chunk;
			yield '</Products>';
		}
		const response = await request(`${emulator.url}/api/xml`, {
			method: 'PUT',
			headers: {
				authorization: basic(DEFAULT_ACCOUNT.username, DEFAULT_ACCOUNT.password),
				...NORTH,
			},
			body: Readable.from(body()),
		});
		expect(response.statusCode).toBe(202);
		const id = await response.body.text();
		const [upload] = emulator.uploads();
		expect(upload.id).toBe(id);
		expect(upload.byteLength).toBe(
			'<Products>'.length + chunk.length * count + '</Products>'.length,
		);
	});

	it('registers image URLs of a document once it is processed successfully', async () => {
		await start({ processingMs: 1000 });
		const xml = `<Products>
			<Product id="1" picture="https://cdn.example.com/a/chair.JPG">
				<ImageUrl>https://images.example.com/render?id=7</ImageUrl>
				<Description>See https://cdn.example.com/b/table.png?size=large for details</Description>
				<Link>https://example.com/manual.pdf</Link>
				<Media><![CDATA[https://cdn.example.com/c/lamp.webp]]></Media>
				<Thumb url="https://cdn.example.com/d/a.jpg?x=1&amp;y=2"/>
			</Product>
		</Products>`;
		await putXml(emulator, xml);
		const find = (uri: string) =>
			call(emulator, 'GET', `/api/images?uri=${encodeURIComponent(uri)}`);
		expect((await find('https://cdn.example.com/a/chair.JPG')).status).toBe(404);
		clock += 1000;
		const found = [
			'https://cdn.example.com/a/chair.JPG',
			'https://images.example.com/render?id=7',
			'https://cdn.example.com/b/table.png?size=large',
			'https://cdn.example.com/c/lamp.webp',
			'https://cdn.example.com/d/a.jpg?x=1&y=2',
		];
		const hashcodes = new Set<string>();
		for (const uri of found) {
			const response = await find(uri);
			expect(response.status).toBe(200);
			hashcodes.add(response.text);
			expect((await call(emulator, 'HEAD', `/api/images/${response.text}`)).status).toBe(200);
		}
		expect(hashcodes.size).toBe(found.length);
		expect((await find('https://example.com/manual.pdf')).status).toBe(404);

		// The same URI in a later document keeps its hashcode: it is derived from the URI alone.
		await emulator.close();
		await start();
		await putXml(
			emulator,
			'<Products><Image>https://cdn.example.com/a/chair.JPG</Image></Products>',
		);
		const again = await find('https://cdn.example.com/a/chair.JPG');
		expect(again.status).toBe(200);
		expect(hashcodes.has(again.text)).toBe(true);
	});

	it('does not register image URLs of a document that fails', async () => {
		await putXml(
			emulator,
			'<!--emulator:fail--><Products><Image>https://cdn.example.com/x.png</Image></Products>',
		);
		const response = await call(
			emulator,
			'GET',
			`/api/images?uri=${encodeURIComponent('https://cdn.example.com/x.png')}`,
		);
		expect(response.status).toBe(404);
	});
});

describe('list by date', () => {
	beforeEach(() => start());

	it.each([
		'2025-13-01',
		'2025-02-30',
		'2025-02-29',
		'20250314',
		'2025-3-14',
		'today',
		'14-03-2025',
		'2025-03-14T00:00',
	])('rejects the date %s with 400', async (date) => {
		const response = await call(emulator, 'GET', `/api/xml/${encodeURIComponent(date)}`);
		expect(response.status).toBe(400);
		expect(response.json()).toEqual(INVALID);
	});

	it('accepts a leap day', async () => {
		expect((await call(emulator, 'GET', '/api/xml/2024-02-29')).json()).toEqual([]);
	});

	it('returns records with exactly the fields of the spec, oldest first, for the UTC date of receivedAt', async () => {
		clock = Date.parse('2025-03-14T23:59:59.999Z');
		const late = (await putXml(emulator, PRODUCTS)).text;
		clock = Date.parse('2025-03-14T08:00:00.000Z');
		const early = (await putXml(emulator, PRODUCTS, '/api/xml/custom')).text;
		clock = Date.parse('2025-03-15T00:00:00.000Z');
		const next = (await putXml(emulator, PRODUCTS)).text;

		const response = await call(emulator, 'GET', '/api/xml/2025-03-14');
		expect(response.status).toBe(200);
		expect(response.headers['content-type']).toMatch(/^application\/json/);
		const records = response.json<Array<Record<string, unknown>>>();
		expect(records.map((r) => r.id)).toEqual([early, late]);
		expect(Object.keys(records[0]).sort()).toEqual(
			['errors', 'file', 'fileLenght', 'id', 'receivedAt', 'result', 'sentBy'].sort(),
		);
		expect(records[1]).toEqual({
			id: late,
			receivedAt: '2025-03-14T23:59:59.999+00:00',
			fileLenght: Buffer.byteLength(PRODUCTS),
			sentBy: { name: 'North Shop', serviceId: 1001, externalId: 'SHOP-NORTH' },
			file: `${emulator.url}/api/files/${late}`,
			result: `${emulator.url}/api/status/${late}/result`,
			errors: [],
		});
		const following = (await call(emulator, 'GET', '/api/xml/2025-03-15')).json<
			Array<{ id: string }>
		>();
		expect(following.map((r) => r.id)).toEqual([next]);
	});

	it('lists only the uploads of the customer named in the headers', async () => {
		const north = (await putXml(emulator, PRODUCTS)).text;
		const south = (
			await putXml(emulator, PRODUCTS, '/api/xml', {
				customer: { customerId: 'SHOP-SOUTH', customerIdType: 'ExternalID' },
			})
		).text;
		const listed = (
			await call(emulator, 'GET', `/api/xml/${today(emulator)}`, {
				customer: { customerId: '1002', customerIdType: 'ServiceID' },
			})
		).json<Array<{ id: string; sentBy: unknown }>>();
		expect(listed.map((r) => r.id)).toEqual([south]);
		expect(listed[0].sentBy).toEqual({
			name: 'South Shop',
			serviceId: 1002,
			externalId: 'SHOP-SOUTH',
		});
		expect(listed.map((r) => r.id)).not.toContain(north);
	});

	it('shows the errors of a failed document only once it is processed', async () => {
		await start({ processingMs: 2000 });
		await putXml(emulator, `<!--emulator:fail-->${PRODUCTS.replace(/^<\?xml[^>]*\?>/, '')}`);
		const before = (await call(emulator, 'GET', `/api/xml/${today(emulator)}`)).json<
			Array<{ errors: unknown[] }>
		>();
		expect(before[0].errors).toEqual([]);
		clock += 2000;
		const after = (await call(emulator, 'GET', `/api/xml/${today(emulator)}`)).json<
			Array<{ errors: Array<{ message: string }> }>
		>();
		expect(after[0].errors.length).toBeGreaterThan(0);
		expect(typeof after[0].errors[0].message).toBe('string');
	});

	it("uses the Host header's origin for the record's URLs", async () => {
		await putXml(emulator, PRODUCTS);
		const port = new URL(emulator.url).port;
		const response = await call(emulator, 'GET', `/api/xml/${today(emulator)}`, {
			headers: { host: `localhost:${port}` },
		});
		const [record] = response.json<Array<{ file: string; result: string }>>();
		expect(record.result.startsWith(`http://localhost:${port}/api/status/`)).toBe(true);
		expect(record.file.startsWith(`http://localhost:${port}/api/files/`)).toBe(true);
	});

	it("with listLayout 'single' returns a lone record as an object, several as an array", async () => {
		await start({ listLayout: 'single' });
		expect((await call(emulator, 'GET', `/api/xml/${today(emulator)}`)).json()).toEqual([]);
		const first = (await putXml(emulator, PRODUCTS)).text;
		expect((await call(emulator, 'GET', `/api/xml/${today(emulator)}`)).json()).toMatchObject({
			id: first,
		});
		await putXml(emulator, PRODUCTS);
		const two = (await call(emulator, 'GET', `/api/xml/${today(emulator)}`)).json();
		expect(Array.isArray(two)).toBe(true);
		expect(two).toHaveLength(2);
	});
});

describe('auth/me', () => {
	beforeEach(() => start());

	it('returns every field of the environment information', async () => {
		const response = await call(emulator, 'GET', '/api/auth/me', { customer: false });
		expect(response.status).toBe(200);
		const info = response.json<Record<string, unknown>>();
		const types: Record<string, string> = {
			id: 'integer',
			userName: 'string',
			email: 'string',
			countryCode: 'string',
			languageCode: 'string',
			customerId: 'integer',
			availableCountries: 'string[]',
			availableLanguages: 'string[]',
			availableCustomers: 'object',
			subscribedStoreInfo: 'array',
			customerGroups: 'array',
			customerGroupGuids: 'array',
			validationGuid: 'guid',
			addOns: 'string[]',
			legacyAddOns: 'string[]',
			lockedServiceFields: 'array',
			productGroupSubscribeId: 'integer',
			authToken: 'object',
			authTokenBytes: 'string',
			currency: 'string',
			currencyFactor: 'number',
			isHeadOffice: 'boolean',
			versions: 'object',
		};
		expect(Object.keys(info).sort()).toEqual(Object.keys(types).sort());
		for (const [field, type] of Object.entries(types)) {
			const value = info[field];
			switch (type) {
				case 'integer':
					expect(Number.isInteger(value)).toBe(true);
					break;
				case 'string[]':
					expect(Array.isArray(value) && value.every((v) => typeof v === 'string')).toBe(true);
					break;
				case 'array':
					expect(Array.isArray(value)).toBe(true);
					break;
				case 'guid':
					expect(value).toMatch(GUID);
					break;
				default:
					expect(typeof value).toBe(type);
			}
		}
		expect(info.userName).toBe(DEFAULT_ACCOUNT.username);
		expect(info.customerId).toBe(1001);
		expect(info.availableCustomers).toEqual({
			'1001': 'North Shop',
			'1002': 'South Shop',
			'1003': 'Head Office',
		});
		expect(info.versions).toEqual({ service: expect.stringMatching(/^1\.\d+\.\d+$/) });
		const token = info.authToken as Record<string, unknown>;
		expect(token).toEqual({
			version: 1,
			userName: DEFAULT_ACCOUNT.username,
			customerId: 1001,
			expireTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/),
			hash: expect.any(String),
		});
		expect(
			JSON.parse(Buffer.from(info.authTokenBytes as string, 'base64').toString('utf8')),
		).toEqual(token);
		expect(JSON.stringify(info)).not.toContain(DEFAULT_ACCOUNT.password);
	});

	it('describes the customer named in the headers when they are sent', async () => {
		const info = (
			await call(emulator, 'GET', '/api/auth/me', {
				customer: { customerId: '1003', customerIdType: 'ServiceID' },
			})
		).json<Record<string, unknown>>();
		expect(info.customerId).toBe(1003);
		expect(info.isHeadOffice).toBe(true);
	});

	it('refuses wrong customer headers even though they are optional here', async () => {
		const response = await call(emulator, 'GET', '/api/auth/me', {
			customer: { customerId: '9999', customerIdType: 'ServiceID' },
		});
		expect(response.status).toBe(401);
		expect(response.json()).toEqual(DENIED);
		const half = await call(emulator, 'GET', '/api/auth/me', {
			customer: false,
			headers: { customerIdType: 'ServiceID' },
		});
		expect(half.status).toBe(401);
	});
});

describe('upload session status', () => {
	beforeEach(() => start({ processingMs: 3000 }));

	it('follows a successful document from queued to processed', async () => {
		const id = (await putXml(emulator, PRODUCTS)).text;
		const done = await call(emulator, 'GET', `/api/status/${id}/done`, { customer: false });
		expect(done.status).toBe(200);
		expect(done.headers['content-type']).toMatch(/^application\/json/);
		expect(done.json()).toBe(false);
		const pending = await call(emulator, 'GET', `/api/status/${id}/result`, { customer: false });
		expect(pending.status).toBe(202);
		expect(pending.headers['content-type']).toMatch(/^text\/plain/);
		expect(pending.text).toBe('The request is still being processed.');

		clock += 2999;
		expect((await call(emulator, 'GET', `/api/status/${id}/done`)).json()).toBe(false);
		clock += 1;
		expect((await call(emulator, 'GET', `/api/status/${id}/done`)).json()).toBe(true);
		const result = await call(emulator, 'GET', `/api/status/${id}/result`);
		expect(result.status).toBe(200);
		expect(result.raw).toHaveLength(0);
	});

	it('answers 301 with an absolute Location to an authenticated error document for a failed document', async () => {
		const id = (await putXml(emulator, `<!--emulator:fail--><Products/>`)).text;
		expect((await call(emulator, 'GET', `/api/status/${id}/result`)).status).toBe(202);
		clock += 3000;
		const result = await call(emulator, 'GET', `/api/status/${id}/result`);
		expect(result.status).toBe(301);
		expect(result.headers.location).toBe(`${emulator.url}/api/status/${id}/errors`);
		const path = new URL(result.headers.location).pathname;
		expect((await call(emulator, 'GET', path, { auth: false })).status).toBe(401);
		const document = await call(emulator, 'GET', path, { customer: false });
		expect(document.status).toBe(200);
		const body = document.json<{
			id: string;
			message: string;
			errors: Array<{ code: string; message: string }>;
		}>();
		expect(body.id).toBe(id);
		expect(body.errors).toEqual([{ code: 'ProcessingFailed', message: expect.any(String) }]);
	});

	it("gives a relative Location with errorLocation 'relative'", async () => {
		await start({ errorLocation: 'relative' });
		const id = (await putXml(emulator, '<!--emulator:fail--><Products/>')).text;
		const result = await call(emulator, 'GET', `/api/status/${id}/result`);
		expect(result.status).toBe(301);
		expect(result.headers.location).toBe(`/api/status/${id}/errors`);
	});

	it('takes the processing time of a document from its marker', async () => {
		const quick = (
			await putXml(emulator, '<Products><!-- emulator:processing-ms=10 --></Products>')
		).text;
		const slow = (await putXml(emulator, '<!--emulator:processing-ms=60000--><Products/>')).text;
		clock += 10;
		expect((await call(emulator, 'GET', `/api/status/${quick}/done`)).json()).toBe(true);
		expect((await call(emulator, 'GET', `/api/status/${slow}/done`)).json()).toBe(false);
		clock += 60000;
		expect((await call(emulator, 'GET', `/api/status/${slow}/result`)).status).toBe(200);
	});

	it('answers 404 for unknown, malformed and foreign session ids', async () => {
		const foreign = (
			await putXml(emulator, PRODUCTS, '/api/xml', {
				auth: OTHER_ACCOUNT,
				customer: { customerId: '2001', customerIdType: 'ServiceID' },
			})
		).text;
		for (const id of ['0f8fad5b-d9cb-469f-a165-70867728950e', 'not-a-session', foreign]) {
			for (const route of ['done', 'result', 'errors']) {
				const response = await call(emulator, 'GET', `/api/status/${id}/${route}`);
				expect(response.status).toBe(404);
			}
		}
		expect(
			(
				await call(emulator, 'GET', `/api/status/${foreign}/done`, {
					auth: OTHER_ACCOUNT,
					customer: false,
				})
			).status,
		).toBe(200);
	});
});

describe('images', () => {
	beforeEach(() => start());

	const png = Buffer.from('89504e470d0a1a0a0000000d49484452deadbeef0d0a2d2d0d0a', 'hex');
	const jpeg = Buffer.from('ffd8ffe000104a46494600010100000100010000ffd9', 'hex');
	const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

	async function upload(parts: Parameters<typeof multipart>[0], query = '') {
		const form = multipart(parts);
		return call(emulator, 'POST', `/api/images${query}`, {
			headers: { 'content-type': form.contentType },
			body: form.body,
		});
	}

	it('stores every file part and answers a hashcode per image', async () => {
		const response = await upload([
			{ fileName: 'a.png', contentType: 'image/png', data: png },
			{ name: 'comment', data: 'ignored' },
			{ fileName: 'b.jpg', contentType: 'image/jpeg', data: jpeg },
		]);
		expect(response.status).toBe(200);
		const images = response.json<Array<{ fileName: string; hashcode: string; md5: string }>>();
		expect(images).toEqual([
			{ fileName: 'a.png', hashcode: expect.stringMatching(/^[0-9a-f]{32}$/), md5: md5(png) },
			{ fileName: 'b.jpg', hashcode: expect.stringMatching(/^[0-9a-f]{32}$/), md5: md5(jpeg) },
		]);
		expect(images[0].hashcode).not.toBe(images[1].hashcode);
		expect(emulator.stats().images).toBe(2);

		const head = await call(emulator, 'HEAD', `/api/images/${images[0].hashcode}`);
		expect(head.status).toBe(200);
		expect(head.raw).toHaveLength(0);
		const missing = await call(emulator, 'HEAD', '/api/images/0123456789abcdef0123456789abcdef');
		expect(missing.status).toBe(404);
		expect(missing.raw).toHaveLength(0);

		const found = await call(emulator, 'GET', `/api/images?md5=${md5(jpeg).toUpperCase()}`);
		expect(found.status).toBe(200);
		expect(found.headers['content-type']).toMatch(/^text\/plain/);
		expect(found.text).toBe(images[1].hashcode);
		expect((await call(emulator, 'GET', `/api/images?md5=${'0'.repeat(32)}`)).status).toBe(404);
		expect(
			(
				await call(
					emulator,
					'GET',
					`/api/images?uri=${encodeURIComponent('https://nowhere.example/x.png')}`,
				)
			).status,
		).toBe(404);
	});

	it('answers the same hashcode for the same bytes and records invert and clippingpath', async () => {
		const first = (await upload([{ fileName: 'a.png', data: png }])).json<
			Array<{ hashcode: string }>
		>();
		const again = await upload(
			[{ fileName: 'renamed.png', data: png }],
			'?invert=true&clippingpath=Path%201',
		);
		expect(again.status).toBe(200);
		expect(again.json<Array<{ hashcode: string }>>()[0].hashcode).toBe(first[0].hashcode);
		expect(emulator.images()).toEqual([
			expect.objectContaining({
				hashcode: first[0].hashcode,
				invert: true,
				clippingPath: 'Path 1',
				fileName: 'renamed.png',
				uploads: 2,
				md5: md5(png),
			}),
		]);
	});

	it.each([
		[
			'a request without a multipart body',
			{ 'content-type': 'application/octet-stream' },
			Buffer.from('x'),
			'',
		],
		['a multipart body without file parts', undefined, undefined, ''],
		['an empty file part', undefined, Buffer.alloc(0), ''],
		['an invert value that is not a boolean', undefined, png, '?invert=yes'],
		['a truncated multipart body', undefined, 'truncated', ''],
	])('rejects %s with 400', async (name, headers, data, query) => {
		let form = multipart(
			name.includes('without file')
				? [{ name: 'other', data: 'x' }]
				: [{ fileName: 'a.png', data: data ?? png }],
		);
		if (name.includes('truncated'))
			form = { ...form, body: form.body.subarray(0, form.body.length - 10) };
		const response = await call(emulator, 'POST', `/api/images${query}`, {
			headers: headers ?? { 'content-type': form.contentType },
			body: form.body,
		});
		expect(response.status).toBe(400);
		expect(response.json()).toEqual(INVALID);
		expect(emulator.stats().images).toBe(0);
	});

	it.each([
		['both md5 and uri', '?md5=abc&uri=https%3A%2F%2Fx.example%2Fa.png'],
		['neither md5 nor uri', ''],
		['empty values', '?md5=&uri='],
	])('GET /api/images with %s answers 400', async (_name, query) => {
		const response = await call(emulator, 'GET', `/api/images${query}`);
		expect(response.status).toBe(400);
		expect(response.json()).toEqual(INVALID);
	});

	it("answers a JSON array of hashcodes with imageUploadLayout 'strings'", async () => {
		await start({ imageUploadLayout: 'strings' });
		const response = await upload([{ data: png }, { data: jpeg }]);
		const body = response.json<string[]>();
		expect(body).toHaveLength(2);
		expect(body.every((h) => /^[0-9a-f]{32}$/.test(h))).toBe(true);
	});

	it("answers hashcodes one per line with imageUploadLayout 'text'", async () => {
		await start({ imageUploadLayout: 'text' });
		const response = await upload([{ data: png }, { data: jpeg }]);
		expect(response.headers['content-type']).toMatch(/^text\/plain/);
		expect(response.text).toMatch(/^[0-9a-f]{32}\n[0-9a-f]{32}$/);
	});

	it('refuses with 413 an upload beyond the configured limits, storing nothing, and takes new limits through the control route', async () => {
		await start({ maxImagesPerRequest: 2, maxImageRequestBytes: 1000 });
		const three = await upload([{ data: png }, { data: jpeg }, { data: Buffer.from('gif') }]);
		expect(three.status).toBe(413);
		const large = await upload([{ data: Buffer.alloc(1001, 1) }]);
		expect(large.status).toBe(413);
		expect(emulator.stats()).toMatchObject({ images: 0, rejected413: 2 });
		expect((await upload([{ data: png }, { data: jpeg }])).status).toBe(200);

		const control = await call(emulator, 'POST', '/__emulator/limits', {
			body: JSON.stringify({ maxImagesPerRequest: 0, maxImageRequestBytes: 0 }),
		});
		expect(control.json()).toEqual({
			maxImageRequestBytes: 0,
			maxImagesPerRequest: 0,
			onlyImages: false,
		});
		emulator.reset();
		expect(
			(await upload([{ data: png }, { data: jpeg }, { data: Buffer.alloc(2000, 1) }])).status,
		).toBe(200);
	});

	it.each([
		['json-string', (hashcode: string) => JSON.stringify(hashcode)],
		['object', (hashcode: string) => JSON.stringify({ hashcode })],
	] as const)("answers a lookup in the '%s' layout", async (layout, expected) => {
		await start({ imageFindLayout: layout });
		const [image] = (await upload([{ data: png }])).json<Array<{ hashcode: string }>>();
		const response = await call(emulator, 'GET', `/api/images?md5=${md5(png)}`);
		expect(response.status).toBe(200);
		expect(response.headers['content-type']).toMatch(/^application\/json/);
		expect(response.text).toBe(expected(image.hashcode));
	});

	it('refuses a whole upload with one part that is not an image (onlyImages), storing nothing', async () => {
		await start({ onlyImages: true });
		const refused = await upload([{ data: png }, { data: Buffer.from('not an image') }]);
		expect(refused.status).toBe(400);
		expect(refused.json()).toEqual(INVALID);
		expect(emulator.stats().images).toBe(0);
		expect((await upload([{ data: png }, { data: jpeg }])).status).toBe(200);

		const control = await call(emulator, 'POST', '/__emulator/limits', {
			body: JSON.stringify({ onlyImages: false }),
		});
		expect(control.json()).toMatchObject({ onlyImages: false });
		expect((await upload([{ data: Buffer.from('not an image') }])).status).toBe(200);
	});

	it('stores every image of an upload and answers one entry with the hostile-entry value', async () => {
		await start();
		await call(emulator, 'POST', '/__emulator/faults', {
			body: JSON.stringify({ count: 1, kind: 'hostile-entry', entry: 1, value: '<html>' }),
		});
		const response = await upload([{ data: png }, { data: jpeg }]);
		const body = response.json<Array<{ hashcode: unknown; md5: string }>>();
		expect(body.map((entry) => entry.hashcode)).toEqual([
			expect.stringMatching(/^[0-9a-f]{32}$/),
			'<html>',
		]);
		expect(body[1].md5).toBe(md5(jpeg));
		expect(emulator.stats().images).toBe(2);
	});
});

describe('authentication and customer headers', () => {
	beforeEach(() => start());

	const routes: Array<[string, 'GET' | 'PUT' | 'POST' | 'HEAD', string]> = [
		['upload', 'PUT', '/api/xml'],
		['custom upload', 'PUT', '/api/xml/custom'],
		['list', 'GET', '/api/xml/2025-03-14'],
		['auth/me', 'GET', '/api/auth/me'],
		['done', 'GET', '/api/status/0f8fad5b-d9cb-469f-a165-70867728950e/done'],
		['result', 'GET', '/api/status/0f8fad5b-d9cb-469f-a165-70867728950e/result'],
		['image upload', 'POST', '/api/images'],
		['image exists', 'HEAD', '/api/images/abc'],
		['image lookup', 'GET', '/api/images?md5=abc'],
	];

	it.each(routes)(
		'%s refuses requests without valid Basic credentials',
		async (_name, method, path) => {
			const attempts: Array<Record<string, string>> = [
				{},
				{ authorization: basic(DEFAULT_ACCOUNT.username, 'wrong-password') },
				{ authorization: basic('nobody', DEFAULT_ACCOUNT.password) },
				{ authorization: 'Bearer abc' },
				{ authorization: 'Basic !!!' },
				{ authentication: basic(DEFAULT_ACCOUNT.username, DEFAULT_ACCOUNT.password) },
			];
			for (const headers of attempts) {
				const response = await call(emulator, method, path, {
					auth: false,
					headers,
					body: method === 'PUT' ? PRODUCTS : undefined,
				});
				expect(response.status).toBe(401);
				if (method !== 'HEAD') expect(response.json()).toEqual(DENIED);
			}
			expect(emulator.stats().rejected401).toBe(attempts.length);
		},
	);

	it.each(routes.filter(([name]) => !['auth/me', 'done', 'result'].includes(name)))(
		'%s requires valid customer headers',
		async (_name, method, path) => {
			const wrong: Array<{ customerId: string; customerIdType: string } | false> = [
				false,
				{ customerId: '1001', customerIdType: 'serviceid' },
				{ customerId: '1001', customerIdType: 'Internal' },
				{ customerId: 'SHOP-NORTH', customerIdType: 'ServiceID' },
				{ customerId: '1001', customerIdType: 'ExternalID' },
				{ customerId: '9999', customerIdType: 'ServiceID' },
				{ customerId: 'OTHER', customerIdType: 'ExternalID' },
				{ customerId: '2001', customerIdType: 'ServiceID' },
			];
			for (const customer of wrong) {
				const response = await call(emulator, method, path, {
					customer,
					body: method === 'PUT' ? PRODUCTS : undefined,
				});
				expect(response.status).toBe(401);
				if (method !== 'HEAD') expect(response.json()).toEqual(DENIED);
			}
			expect(emulator.stats().uploads).toBe(0);
		},
	);

	it('accepts either kind of customer id', async () => {
		for (const customer of [
			NORTH,
			{ customerId: 'SHOP-NORTH', customerIdType: 'ExternalID' },
			{ customerId: '1003', customerIdType: 'ServiceID' },
		]) {
			expect((await putXml(emulator, PRODUCTS, '/api/xml', { customer })).status).toBe(202);
		}
	});

	it('answers 404 for unknown routes and 405 for a wrong method', async () => {
		expect((await call(emulator, 'GET', '/api/unknown')).status).toBe(404);
		expect((await call(emulator, 'GET', '/elsewhere')).status).toBe(404);
		expect((await call(emulator, 'DELETE', '/api/xml')).status).toBe(405);
		expect((await call(emulator, 'POST', '/api/xml', { body: PRODUCTS })).status).toBe(405);
		expect(emulator.stats().requests).toMatchObject({
			'GET (unknown route)': 2,
			'DELETE /api/xml': 1,
			'POST /api/xml': 1,
		});
	});
});

describe('test environment', () => {
	beforeEach(() => start({ environment: 'test' }));

	async function outcome(xml: string | Buffer) {
		const id = (await putXml(emulator, xml)).text;
		const result = await call(emulator, 'GET', `/api/status/${id}/result`);
		if (result.status !== 301) return { status: result.status, errors: [] };
		const document = await call(emulator, 'GET', new URL(result.headers.location).pathname);
		return {
			status: 301,
			errors: document.json<{ errors: Array<Record<string, unknown>> }>().errors,
		};
	}

	it('accepts products with an identifier attribute or child element', async () => {
		expect(
			await outcome(
				'<Products><Product id="1"/><Product><Sku>A-2</Sku></Product><p:product xmlns:p="urn:x" p:GTIN="0123"/></Products>',
			),
		).toEqual({ status: 200, errors: [] });
	});

	it('fails a product without an identifier and names the element and its line', async () => {
		const { status, errors } = await outcome(
			'<Products>\n<Product id="1"/>\n<Product>\n<Name>No id</Name>\n<Sku> </Sku>\n</Product>\n</Products>',
		);
		expect(status).toBe(301);
		expect(errors).toEqual([
			{
				code: 'MissingIdentifier',
				element: 'Product',
				line: 3,
				message: expect.stringContaining('<Product> at line 3'),
			},
		]);
	});

	it('fails documents that are not UTF-8', async () => {
		const latin = Buffer.from(
			'<?xml version="1.0" encoding="ISO-8859-1"?><Products><Product id="1"><Name>Bl\u00e5</Name></Product></Products>',
			'latin1',
		);
		expect((await outcome(latin)).errors).toEqual([
			expect.objectContaining({ code: 'InvalidEncoding' }),
		]);
		const broken = Buffer.concat([
			Buffer.from('<Products><Product id="1"><Name>'),
			Buffer.from([0xc3, 0x28]),
			Buffer.from('</Name></Product></Products>'),
		]);
		expect((await outcome(broken)).errors).toEqual([
			expect.objectContaining({ code: 'InvalidEncoding' }),
		]);
	});

	it('is stricter than production, which accepts the same documents', async () => {
		await start({ environment: 'production' });
		expect(await outcome('<Products><Product><Name>No id</Name></Product></Products>')).toEqual({
			status: 200,
			errors: [],
		});
		expect(
			await outcome(
				Buffer.from(
					'<?xml version="1.0" encoding="ISO-8859-1"?><Products><Product id="1"/></Products>',
					'latin1',
				),
			),
		).toEqual({ status: 200, errors: [] });
	});
});
