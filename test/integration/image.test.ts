import { createHash, randomBytes } from 'node:crypto';

import type {
	IBinaryKeyData,
	IDataObject,
	INodeExecutionData,
	INodeParameters,
} from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import type { Emulator } from '../../scripts/emulator';
import { putXml } from '../../scripts/emulator/client';
import { binaryItem, runNode, setBinaryDataMode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, fastCredentials, useEmulator } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';
import { postControl } from '../helpers/service';

jest.setTimeout(30_000);

const node = new ProductDataIntegration();

interface ImageFile {
	data: Buffer;
	fileName: string;
	mimeType: string;
}

function md5(data: Buffer): string {
	return createHash('md5').update(data).digest('hex');
}

function image(fileName: string, size = 2048, mimeType = 'image/jpeg'): ImageFile {
	return { data: randomBytes(size), fileName, mimeType };
}

/** An input item holding each file under its own binary property, stored as n8n stores them. */
async function imageItem(
	files: Record<string, ImageFile>,
	json: IDataObject = {},
): Promise<INodeExecutionData> {
	const binary: IBinaryKeyData = {};
	for (const [property, file] of Object.entries(files)) {
		const item = await binaryItem(file.data, file.fileName, file.mimeType);
		binary[property] = item.binary!.data;
	}
	return { json, binary };
}

function upload(extra: INodeParameters = {}, options: INodeParameters = {}): INodeParameters {
	return {
		resource: 'image',
		operation: 'upload',
		imagesFrom: 'named',
		binaryProperties: 'data',
		options,
		...extra,
	};
}

function find(
	searchBy: 'md5' | 'uri',
	value: string,
	options: INodeParameters = {},
): INodeParameters {
	return { resource: 'image', operation: 'find', searchBy, [searchBy]: value, options };
}

function checkExists(hashcode: string, options: INodeParameters = {}): INodeParameters {
	return { resource: 'image', operation: 'checkExists', hashcode, options };
}

function requestsTo(emulator: Emulator, route: string): number {
	return emulator.stats().requests[route] ?? 0;
}

function totalRequests(emulator: Emulator): number {
	return Object.values(emulator.stats().requests).reduce((sum, n) => sum + n, 0);
}

function hashcodeOf(emulator: Emulator, data: Buffer): string | undefined {
	return emulator.images().find((record) => record.md5 === md5(data))?.hashcode;
}

/**
 * The next upload is refused with 429 after the service read its body. (A full bucket refuses too,
 * but a 20 ms bucket may drain before a busy machine sends the request.)
 */
function refuseNextUpload(emulator: Emulator): Promise<void> {
	return postControl(emulator.url, 'faults', { count: 1, kind: '429', path: '/api/images' });
}

describe('Image resource against the emulator', () => {
	const { emulator, credentials } = useEmulator(FAST_BUCKET);

	describe.each(['default', 'filesystem'] as const)('Upload with binary data mode %s', (mode) => {
		beforeAll(async () => {
			await setBinaryDataMode(mode);
		});

		it('uploads one image and reports its hashcode, md5 and size', async () => {
			const file = image('shoe.jpg', 4096);
			const item = await imageItem({ data: file });
			expect(Boolean(item.binary!.data.id)).toBe(mode === 'filesystem');

			const { output, error } = await runNode({
				node,
				parameters: upload(),
				items: [item],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{
					json: {
						hashcode: hashcodeOf(emulator, file.data),
						fileName: 'shoe.jpg',
						mimeType: 'image/jpeg',
						md5: md5(file.data),
						bytes: 4096,
						binaryProperty: 'data',
					},
					pairedItem: { item: 0 },
				},
			]);
			const [record] = emulator.images();
			expect(record).toMatchObject({
				fileName: 'shoe.jpg',
				contentType: 'image/jpeg',
				size: 4096,
				invert: false,
				clippingPath: null,
			});
		});

		it('Retry On Fail does not upload again the images of items uploaded on an earlier try', async () => {
			const uploaded = await imageItem({ data: image('first.jpg') });
			const failing = await imageItem({ other: image('second.jpg') });
			const { output, error } = await runNode({
				node,
				// One image per request: the first item's request goes before the second item fails.
				parameters: upload({}, { imagesPerRequest: 1, rememberKnownImages: false }),
				items: [uploaded, failing],
				credentials: credentials(),
				retryOnFail: { maxTries: 3 },
			});

			expect(error?.message).toMatch(/data/);
			expect(output).toEqual([]);
			// Three tries of the node; the first item's image went to the service once.
			expect(requestsTo(emulator, 'POST /api/images')).toBe(1);
			expect(emulator.images()).toHaveLength(1);
		});

		it('refuses a MIME type that is not a media type before any request; a file name cannot break the part header', async () => {
			const evil = await imageItem({ data: image('a.jpg', 1000, 'image/jpeg\r\nX-Injected: 1') });
			const refused = await runNode({
				node,
				parameters: upload(),
				items: [evil],
				credentials: credentials(),
			});
			expect(refused.error?.message).toBe(
				'The MIME type of binary field "data" of item 0 is not a media type: "image/jpeg\\r\\nX-Injected: 1"',
			);
			expect(requestsTo(emulator, 'POST /api/images')).toBe(0);

			const named = await imageItem({
				data: image('a"\r\nX-Injected: 1.jpg', 1000, 'image/jpeg; charset="x"'),
			});
			const { output, error } = await runNode({
				node,
				parameters: upload(),
				items: [named],
				credentials: credentials(),
			});
			expect(error).toBeUndefined();
			expect(output[0][0].json).toMatchObject({
				fileName: 'a___X-Injected: 1.jpg',
				mimeType: 'image/jpeg; charset="x"',
			});
			expect(emulator.images()).toEqual([
				expect.objectContaining({ fileName: 'a___X-Injected: 1.jpg' }),
			]);
		});

		it.each(['image/jpeg; name="a\0b"', 'image/jpeg; name="a\vb"'])(
			'refuses the MIME type %j, whose control character would reach the part header, before any request',
			async (mimeType) => {
				const evil = await imageItem({ data: image('a.jpg', 1000, mimeType) });
				const { error } = await runNode({
					node,
					parameters: upload(),
					items: [evil],
					credentials: credentials(),
				});
				expect(error?.message).toBe(
					`The MIME type of binary field "data" of item 0 is not a media type: ${JSON.stringify(mimeType)}`,
				);
				expect(totalRequests(emulator)).toBe(0);
			},
		);

		it('sends the images of consecutive items in one request', async () => {
			const files = [
				image('a.jpg'),
				image('b.png', 3000, 'image/png'),
				image('c.jpg'),
				image('d.jpg'),
			];
			const items = [
				await imageItem({ data: files[0], second: files[1] }, { sku: 'A' }),
				await imageItem({ data: files[2], second: files[3] }, { sku: 'B' }),
			];

			const { output, error } = await runNode({
				node,
				parameters: upload({ binaryProperties: 'data, second' }),
				items,
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(requestsTo(emulator, 'POST /api/images')).toBe(1);
			expect(emulator.stats().images).toBe(4);
			expect(
				output[0].map(({ json }) => [json.binaryProperty, json.fileName, json.md5, json.hashcode]),
			).toEqual(
				files.map((file, n) => [
					n % 2 === 0 ? 'data' : 'second',
					file.fileName,
					md5(file.data),
					hashcodeOf(emulator, file.data),
				]),
			);
			expect(output[0].map(({ pairedItem }) => pairedItem)).toEqual([
				{ item: 0 },
				{ item: 0 },
				{ item: 1 },
				{ item: 1 },
			]);
			expect(output[0][1].json).toMatchObject({ mimeType: 'image/png', bytes: 3000 });
		});

		it('uploads every binary field of the item with All Binary Fields', async () => {
			const files = {
				front: image('front.jpg'),
				back: image('back.jpg'),
				label: image('label.gif', 100, 'image/gif'),
			};
			const item = await imageItem(files);

			const { output, error } = await runNode({
				node,
				parameters: upload({ imagesFrom: 'all', binaryProperties: 'ignored' }),
				items: [item],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(requestsTo(emulator, 'POST /api/images')).toBe(1);
			expect(output[0].map(({ json }) => [json.binaryProperty, json.md5])).toEqual(
				Object.entries(files).map(([property, file]) => [property, md5(file.data)]),
			);
			expect(output[0].every(({ json }) => typeof json.hashcode === 'string')).toBe(true);
		});

		it('skips images the service has already, and uploads nothing on a second run', async () => {
			const known = image('known.jpg');
			const fresh = image('fresh.jpg');
			await runNode({
				node,
				parameters: upload(),
				items: [await imageItem({ data: known })],
				credentials: credentials(),
			});
			expect(emulator.stats().images).toBe(1);

			const items = [await imageItem({ data: known, other: fresh })];
			// Without the known images, so that every image is looked up.
			const parameters = upload(
				{ binaryProperties: 'data,other' },
				{ skipExisting: true, rememberKnownImages: false },
			);
			const first = await runNode({ node, parameters, items, credentials: credentials() });

			expect(first.error).toBeUndefined();
			expect(first.output[0].map(({ json }) => json)).toEqual([
				{
					hashcode: hashcodeOf(emulator, known.data),
					fileName: 'known.jpg',
					mimeType: 'image/jpeg',
					md5: md5(known.data),
					bytes: known.data.length,
					binaryProperty: 'data',
					skipped: true,
				},
				{
					hashcode: hashcodeOf(emulator, fresh.data),
					fileName: 'fresh.jpg',
					mimeType: 'image/jpeg',
					md5: md5(fresh.data),
					bytes: fresh.data.length,
					binaryProperty: 'other',
					skipped: false,
				},
			]);
			expect(emulator.stats().images).toBe(2);
			expect(requestsTo(emulator, 'GET /api/images')).toBe(2);
			expect(requestsTo(emulator, 'POST /api/images')).toBe(2);

			const second = await runNode({ node, parameters, items, credentials: credentials() });

			expect(second.error).toBeUndefined();
			expect(requestsTo(emulator, 'POST /api/images')).toBe(2);
			expect(emulator.stats().images).toBe(2);
			expect(second.output[0].map(({ json }) => [json.hashcode, json.skipped])).toEqual(
				first.output[0].map(({ json }) => [json.hashcode, true]),
			);
		});

		it('sends invert and clippingpath only when they are set', async () => {
			const plain = image('plain.jpg');
			const clipped = image('clipped.jpg');
			await runNode({
				node,
				parameters: upload({}, { invert: false, clippingPath: '  ' }),
				items: [await imageItem({ data: plain })],
				credentials: credentials(),
			});
			await runNode({
				node,
				parameters: upload({}, { invert: true, clippingPath: 'Path 1' }),
				items: [await imageItem({ data: clipped })],
				credentials: credentials(),
			});

			const records = emulator.images();
			expect(records.find((r) => r.md5 === md5(plain.data))).toMatchObject({
				invert: false,
				clippingPath: null,
			});
			expect(records.find((r) => r.md5 === md5(clipped.data))).toMatchObject({
				invert: true,
				clippingPath: 'Path 1',
			});
		});
	});

	describe('Upload of stored binary data', () => {
		beforeAll(async () => {
			await setBinaryDataMode('filesystem');
		});

		it('streams a large image and hashes it on the way', async () => {
			// Larger than form-data's 2 MB buffering limit, so the part must really stream.
			const file = image('poster.tif', 6 * 1024 * 1024 + 17, 'image/tiff');
			const item = await imageItem({ data: file });

			const { output, error } = await runNode({
				node,
				parameters: upload(),
				items: [item],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0][0].json).toMatchObject({
				md5: md5(file.data),
				bytes: file.data.length,
				hashcode: hashcodeOf(emulator, file.data),
			});
			expect(emulator.images()[0].size).toBe(file.data.length);
		});

		it('repeats a refused upload with fresh streams', async () => {
			const files = { data: image('one.jpg', 70_000), second: image('two.jpg', 90_000) };
			const item = await imageItem(files);
			await refuseNextUpload(emulator);

			const { output, error } = await runNode({
				node,
				parameters: upload({ binaryProperties: 'data,second' }),
				items: [item],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(emulator.stats().requests['POST /api/images']).toBe(2);
			expect(emulator.stats().images).toBe(2);
			expect(output[0].map(({ json }) => [json.md5, json.bytes, json.hashcode])).toEqual(
				Object.values(files).map((file) => [
					md5(file.data),
					file.data.length,
					hashcodeOf(emulator, file.data),
				]),
			);
		});
	});

	describe('Upload errors', () => {
		beforeAll(async () => {
			await setBinaryDataMode('default');
		});

		it('names the item whose binary field is missing, before any request', async () => {
			const item = await imageItem({ other: image('b.jpg') });

			const { error } = await runNode({
				node,
				parameters: upload(),
				items: [item],
				credentials: credentials(),
			});

			expect(error?.message).toContain("'data'");
			expect(error?.message).toContain('item 0');
			expect(totalRequests(emulator)).toBe(0);
		});

		it('fails an item without binary data under All Binary Fields', async () => {
			const { error } = await runNode({
				node,
				parameters: upload({ imagesFrom: 'all' }),
				items: [{ json: { sku: 'no image' } }],
				credentials: credentials(),
			});

			expect(error?.message).toBe('Item 0 has no binary data');
			expect(totalRequests(emulator)).toBe(0);
		});

		it('continues with the other items and pairs the failure with its item', async () => {
			const good = image('good.jpg');
			const items = [await imageItem({ other: image('x.jpg') }), await imageItem({ data: good })];

			const { output, error } = await runNode({
				node,
				parameters: upload(),
				items,
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0]).toHaveLength(2);
			expect(output[0][0].pairedItem).toEqual({ item: 0 });
			expect(output[0][0].json.error).toEqual(expect.stringContaining("'data'"));
			expect(output[0][1]).toMatchObject({
				json: { md5: md5(good.data), hashcode: hashcodeOf(emulator, good.data) },
				pairedItem: { item: 1 },
			});
			expect(requestsTo(emulator, 'POST /api/images')).toBe(1);
		});

		it('fails on Input Binary Fields that name nothing', async () => {
			const { error } = await runNode({
				node,
				parameters: upload({ binaryProperties: ' , ' }),
				items: [await imageItem({ data: image('a.jpg') })],
				credentials: credentials(),
			});

			expect(error?.message).toBe('Input Binary Fields is empty in item 0');
		});
	});

	describe('Check Exists', () => {
		it('tells an existing image from a missing one, without failing on 404', async () => {
			await setBinaryDataMode('default');
			const file = image('exists.jpg');
			await runNode({
				node,
				parameters: upload(),
				items: [await imageItem({ data: file })],
				credentials: credentials(),
			});
			const hashcode = hashcodeOf(emulator, file.data) as string;

			const { output, error } = await runNode({
				node,
				parameters: checkExists('={{ $json.hashcode }}'),
				items: [{ json: { hashcode } }, { json: { hashcode: 'ffffffffffffffffffffffffffffffff' } }],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{ json: { hashcode, exists: true }, pairedItem: { item: 0 } },
				{
					json: { hashcode: 'ffffffffffffffffffffffffffffffff', exists: false },
					pairedItem: { item: 1 },
				},
			]);
			expect(requestsTo(emulator, 'HEAD /api/images/{hashcode}')).toBe(2);
		});

		it('refuses an empty hashcode before any request', async () => {
			const { error } = await runNode({
				node,
				parameters: checkExists('  '),
				credentials: credentials(),
			});

			expect(error?.message).toBe('The Hashcode of item 0 is empty');
			expect(totalRequests(emulator)).toBe(0);
		});

		it.each(['../../auth/me', 'a/b?c=d', 'a/./b', 'h'.repeat(129)])(
			'refuses the hashcode %j before any request, naming the item and the field',
			async (hashcode) => {
				const { output, error } = await runNode({
					node,
					parameters: checkExists('={{ $json.hashcode }}'),
					items: [{ json: { hashcode: 'ab/cd+ef==' } }, { json: { hashcode } }],
					credentials: credentials(),
					continueOnFail: true,
				});

				expect(error).toBeUndefined();
				expect(output[0][1]).toEqual({
					json: expect.objectContaining({
						error: `The Hashcode of item 1 is not an image hashcode: ${JSON.stringify(hashcode)}`,
					}),
					pairedItem: { item: 1 },
				});
				// Only the first item's hashcode, path-encoded, reached the service.
				expect(totalRequests(emulator)).toBe(1);
			},
		);
	});

	describe('Find', () => {
		it('finds an uploaded image by its md5, in any letter case', async () => {
			await setBinaryDataMode('default');
			const file = image('found.jpg');
			await runNode({
				node,
				parameters: upload(),
				items: [await imageItem({ data: file })],
				credentials: credentials(),
			});

			const { output, error } = await runNode({
				node,
				parameters: find('md5', ` ${md5(file.data).toUpperCase()} `),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0][0].json).toEqual({
				found: true,
				hashcode: hashcodeOf(emulator, file.data),
				md5: md5(file.data),
			});
		});

		it('answers found = false for an unknown md5', async () => {
			const unknown = md5(Buffer.from('never uploaded'));

			const { output, error } = await runNode({
				node,
				parameters: find('md5', unknown),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0][0].json).toEqual({ found: false, md5: unknown });
			expect(requestsTo(emulator, 'GET /api/images')).toBe(1);
		});

		it('fails on not found with Error If Not Found', async () => {
			const unknown = md5(Buffer.from('never uploaded'));

			const { error } = await runNode({
				node,
				parameters: find('md5', unknown, { errorIfNotFound: true }),
				credentials: credentials(),
			});

			expect(error?.message).toBe(`No image with the MD5 ${unknown} exists (item 0)`);
		});

		it('finds an image by the URI a product document referenced', async () => {
			const uri = 'https://cdn.example.com/images/boot-1234.jpg';
			const accepted = await putXml(
				emulator,
				`<products><product><sku>1234</sku><image>${uri}</image></product></products>`,
			);
			expect(accepted.status).toBe(202);

			const { output, error } = await runNode({
				node,
				parameters: find('uri', '={{ $json.uri }}'),
				items: [{ json: { uri } }, { json: { uri: 'https://cdn.example.com/images/unknown.jpg' } }],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0].map(({ json }) => json)).toEqual([
				{
					found: true,
					hashcode: emulator.images().find((r) => r.uris.includes(uri))?.hashcode,
					uri,
				},
				{ found: false, uri: 'https://cdn.example.com/images/unknown.jpg' },
			]);
		});

		it.each<[string, 'md5' | 'uri', string, string]>([
			['an empty md5', 'md5', '', 'The MD5 of item 0 is empty'],
			['a short md5', 'md5', 'abc123', 'The MD5 "abc123" of item 0 is not an MD5 hash'],
			['a file name as md5', 'md5', 'shoe.jpg', 'The MD5 "shoe.jpg" of item 0 is not an MD5 hash'],
			[
				'an md5 with a non-hex letter',
				'md5',
				'g'.repeat(32),
				`The MD5 "${'g'.repeat(32)}" of item 0 is not an MD5 hash`,
			],
			['an empty URI', 'uri', ' ', 'The URI of item 0 is empty'],
			[
				'a relative URI',
				'uri',
				'/images/a.jpg',
				'The URI "/images/a.jpg" of item 0 is not an absolute http(s) URL',
			],
			[
				'an ftp URI',
				'uri',
				'ftp://cdn.example.com/a.jpg',
				'The URI "ftp://cdn.example.com/a.jpg" of item 0 is not an absolute http(s) URL',
			],
		])('refuses %s before any request', async (_case, searchBy, value, message) => {
			// From an expression: n8n itself refuses a required field left empty in the editor.
			const { error } = await runNode({
				node,
				parameters: find(searchBy, '={{ $json.value }}'),
				items: [{ json: { value } }],
				credentials: credentials(),
			});

			expect(error?.message).toBe(message);
			expect(error?.description).toBeTruthy();
			expect(totalRequests(emulator)).toBe(0);
		});

		it('continues past an invalid item and pairs its error', async () => {
			const unknown = md5(Buffer.from('x'));

			const { output, error } = await runNode({
				node,
				parameters: find('md5', '={{ $json.md5 }}'),
				items: [{ json: { md5: 'not-a-hash' } }, { json: { md5: unknown } }],
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{
					json: {
						error: 'The MD5 "not-a-hash" of item 0 is not an MD5 hash',
						errorDetails: expect.any(String),
					},
					pairedItem: { item: 0 },
				},
				{ json: { found: false, md5: unknown }, pairedItem: { item: 1 } },
			]);
			expect(requestsTo(emulator, 'GET /api/images')).toBe(1);
		});
	});

	describe('Customer option', () => {
		it('sends the request for the chosen customer instead of the credential’s', async () => {
			await setBinaryDataMode('default');
			const file = image('customer.jpg');
			// The credential names a customer the account does not have: only the override can pass.
			const foreign = credentials({ customerId: '4242' });

			const refused = await runNode({
				node,
				parameters: upload(),
				items: [await imageItem({ data: file })],
				credentials: foreign,
			});
			expect(refused.error?.message).toBe('Authorization has been denied for this request.');

			const { output, error } = await runNode({
				node,
				parameters: upload({}, { customer: '1002' }),
				items: [await imageItem({ data: file })],
				credentials: foreign,
			});
			expect(error).toBeUndefined();
			expect(output[0][0].json.hashcode).toBe(hashcodeOf(emulator, file.data));

			const found = await runNode({
				node,
				parameters: find('md5', md5(file.data), { customer: '1003' }),
				credentials: foreign,
			});
			expect(found.output[0][0].json).toMatchObject({ found: true });
			const exists = await runNode({
				node,
				parameters: checkExists(hashcodeOf(emulator, file.data) as string, { customer: '1001' }),
				credentials: foreign,
			});
			expect(exists.output[0][0].json).toMatchObject({ exists: true });
		});

		it('refuses a customer of another account', async () => {
			const { error } = await runNode({
				node,
				parameters: find('md5', md5(Buffer.from('y')), { customer: '4242' }),
				credentials: credentials(),
			});

			expect(error?.message).toBe('Authorization has been denied for this request.');
			expect(emulator.stats().rejected401).toBe(1);
		});
	});
});

describe.each(['objects', 'strings', 'text'] as const)(
	'Upload answer layout %s',
	(imageUploadLayout) => {
		const { emulator, credentials } = useEmulator({ ...FAST_BUCKET, imageUploadLayout });
		beforeAll(async () => await setBinaryDataMode('default'));

		it('maps the hashcodes to the images in order', async () => {
			const files = [image('1.jpg'), image('2.jpg'), image('3.jpg')];

			const { output, error } = await runNode({
				node,
				parameters: upload({ binaryProperties: 'a,b,c' }),
				items: [await imageItem({ a: files[0], b: files[1], c: files[2] })],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0].map(({ json }) => json.hashcode)).toEqual(
				files.map((file) => hashcodeOf(emulator, file.data)),
			);
			expect(output[0].some(({ json }) => 'warning' in json)).toBe(false);
		});
	},
);

describe.each(['text', 'json-string', 'object'] as const)(
	'Find answer layout %s',
	(imageFindLayout) => {
		const { emulator, credentials } = useEmulator({ ...FAST_BUCKET, imageFindLayout });
		beforeAll(async () => await setBinaryDataMode('default'));

		it('reads the hashcode in Find and in Skip Existing', async () => {
			const file = image('layout.jpg');
			await runNode({
				node,
				parameters: upload(),
				items: [await imageItem({ data: file })],
				credentials: credentials(),
			});
			const hashcode = hashcodeOf(emulator, file.data);

			const found = await runNode({
				node,
				parameters: find('md5', md5(file.data)),
				credentials: credentials(),
			});
			const skipped = await runNode({
				node,
				parameters: upload({}, { skipExisting: true, rememberKnownImages: false }),
				items: [await imageItem({ data: file })],
				credentials: credentials(),
			});

			expect(found.output[0][0].json).toEqual({ found: true, hashcode, md5: md5(file.data) });
			expect(skipped.output[0][0].json).toMatchObject({ hashcode, skipped: true });
			expect(emulator.stats().requests['POST /api/images']).toBe(1);
		});
	},
);

/** A stand-in service whose image routes answer with a fixed body, for layouts the emulator lacks. */
describe('Answers in layouts the node does not know', () => {
	let server: LocalServer;
	let answer = '';
	let posts = 0;

	beforeAll(async () => {
		await setBinaryDataMode('default');
		server = await listenLocal((req, res) => {
			req.resume();
			req.on('end', () => {
				if (req.method === 'POST') posts++;
				res.writeHead(200, { 'content-type': 'text/plain' });
				res.end(answer);
			});
		});
	});

	afterAll(async () => {
		await server.close();
	});

	const credentials = () => fastCredentials(server);

	/** Two images in one request, so the answer has to be matched to them. */
	const uploadTwoImages = async () =>
		await runNode({
			node,
			parameters: upload({ binaryProperties: 'a,b' }),
			items: [await imageItem({ a: image('a.jpg'), b: image('b.jpg') })],
			credentials: credentials(),
		});

	it('hands back the raw body instead of failing', async () => {
		answer = '<html><body>Upload complete</body></html>';

		const { output, error } = await uploadTwoImages();

		expect(error).toBeUndefined();
		expect(output[0]).toHaveLength(2);
		for (const { json } of output[0]) {
			expect(json.hashcode).toBeUndefined();
			expect(json.raw).toBe(answer);
			expect(json.warning).toEqual(expect.stringContaining('cannot read'));
		}
	});

	it('says so when the number of hashcodes does not match the images', async () => {
		answer = 'abc123';
		posts = 0;

		const { output, error } = await uploadTwoImages();

		expect(error).toBeUndefined();
		expect(posts).toBe(1);
		expect(
			output[0].map(({ json }) => [json.hashcode, json.returnedHashcodes, json.warning]),
		).toEqual([
			[
				undefined,
				['abc123'],
				'The service returned 1 hashcode(s) for 2 image(s), so they cannot be matched to the images: see returnedHashcodes',
			],
			[
				undefined,
				['abc123'],
				'The service returned 1 hashcode(s) for 2 image(s), so they cannot be matched to the images: see returnedHashcodes',
			],
		]);
	});

	it('warns when the service reports another md5 for a hashcode', async () => {
		const file = image('a.jpg');
		answer = JSON.stringify([{ hashcode: 'h1', md5: md5(Buffer.from('something else')) }]);

		const { output } = await runNode({
			node,
			parameters: upload(),
			items: [await imageItem({ data: file })],
			credentials: credentials(),
		});

		expect(output[0][0].json).toMatchObject({ hashcode: 'h1', md5: md5(file.data) });
		expect(output[0][0].json.warning).toEqual(expect.stringContaining('reports the MD5'));
	});

	it('reports a found image whose answer holds no hashcode', async () => {
		answer = 'Image found';
		const value = md5(Buffer.from('z'));

		const { output, error } = await runNode({
			node,
			parameters: find('md5', value),
			credentials: credentials(),
		});

		expect(error).toBeUndefined();
		expect(output[0][0].json).toEqual({
			found: true,
			md5: value,
			warning: expect.any(String),
			raw: 'Image found',
		});
	});

	it('remembers no hashcode of a million characters: neither as a known image nor for Retry On Fail', async () => {
		answer = JSON.stringify([{ hashcode: 'h'.repeat(1_000_000) }]);
		const file = image('huge-hashcode.jpg');
		for (let run = 1; run <= 2; run++) {
			posts = 0;
			const { output, error } = await runNode({
				node,
				parameters: upload(),
				items: [await imageItem({ data: file })],
				credentials: credentials(),
				continueOnFail: true,
			});
			expect(error).toBeUndefined();
			expect(output[0][0].json.error).toMatch(/without a usable hashcode/);
			expect(output[0][0].json.hashcode).toBeUndefined();
			expect(output[0][0].json.known).toBeUndefined();
			expect(posts).toBe(1);
		}

		posts = 0;
		const { error } = await runNode({
			node,
			// One image per request: the first item's request goes before the second item fails.
			parameters: upload({}, { imagesPerRequest: 1, rememberKnownImages: false }),
			items: [await imageItem({ data: file }), await imageItem({ other: image('second.jpg') })],
			credentials: credentials(),
			retryOnFail: { maxTries: 3 },
		});
		expect(error?.message).toMatch(/data/);
		// Each of the three tries sends the image again: its answer was not kept.
		expect(posts).toBe(3);
	});

	it('keeps no dot segment a hashcode could bring into a path', async () => {
		answer = JSON.stringify([{ hashcode: 'x/../../auth/me' }]);
		const { output } = await runNode({
			node,
			parameters: upload(),
			items: [await imageItem({ data: image('dots.jpg') })],
			credentials: credentials(),
			continueOnFail: true,
		});
		expect(output[0][0].json.hashcode).toBeUndefined();
		expect(output[0][0].json.error).toBe(
			'The service answered the image in binary field "data" of item 0 without a usable hashcode',
		);
	});

	it('shows the md5 the service reports short and on one line', async () => {
		answer = JSON.stringify([
			{ hashcode: 'h1', md5: `${'f'.repeat(100_000)}\n2026-01-01 ERROR forged` },
		]);
		const { output } = await runNode({
			node,
			parameters: upload(),
			items: [await imageItem({ data: image('md5.jpg') })],
			credentials: credentials(),
		});
		const warning = output[0][0].json.warning as string;
		expect(warning).toEqual(expect.stringContaining('reports the MD5'));
		expect(warning.length).toBeLessThan(300);
		expect(warning).not.toMatch(/[\r\n]/);
	});
});
