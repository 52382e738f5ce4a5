/**
 * Every operation of the action node in a real n8n (`n8n start`, workflows run through its REST
 * API) against the emulator: what the node outputs (fields, values, paired items) and what reached
 * the service.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { IDataObject, IPairedItemData } from 'n8n-workflow';

import { DEFAULT_ACCOUNT } from '../../scripts/emulator';
import { call, putXml } from '../../scripts/emulator/client';
import {
	actionNode,
	chainWorkflow,
	downloadNode,
	ITEMS_NAME,
	nodeItems,
	prepareN8n,
	runError,
	type ChainNode,
	type InputItem,
	type N8nHarness,
	type StoredExecution,
} from './harness';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const HASHCODE = /^[0-9a-f]{32}$/;

const CHAIR =
	'<?xml version="1.0" encoding="UTF-8"?>\n<Products><Product><Sku>CH-1</Sku><Name>Chair</Name></Product></Products>';
const TABLE = '<Products><Product><Sku>TB-1</Sku><Name>Table</Name></Product></Products>';
const BROKEN = '<Products>\n  <Product>\n    <Sku>BR-1</Sku>\n  </Products>';
const FAILING = '<Products><!--emulator:fail--><Product><Sku>FL-1</Sku></Product></Products>';
/** Still processing long after any test has ended. */
const ENDLESS =
	'<Products><!--emulator:processing-ms=3600000--><Product><Sku>SL-1</Sku></Product></Products>';

// Tiny PNG files: the service takes any bytes, but images are what the node is for.
const FRONT = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEUlEQVR4nGNYkGeDFTEMLQkAVahSgRDQDbcAAAAASUVORK5CYII=',
	'base64',
);
const BACK = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEUlEQVR4nGOoCNDAihiGlgQAhiE8AfZYS04AAAAASUVORK5CYII=',
	'base64',
);

const TEXT_SOURCE = { source: 'text', xml: '={{ $json.xml }}' };

function md5(data: Buffer): string {
	return createHash('md5').update(data).digest('hex');
}

function xmlItems(...documents: string[]): InputItem[] {
	return documents.map((xml) => ({ json: { xml } }));
}

/** Serves files over HTTP on 127.0.0.1, for workflows that download them. */
async function serveFiles(
	files: Record<string, { body: Buffer | string; contentType: string }>,
): Promise<{ url: string; server: Server }> {
	const server = createServer((req, res) => {
		const file = files[req.url ?? ''];
		if (!file) {
			res.writeHead(404).end();
			return;
		}
		res.writeHead(200, { 'content-type': file.contentType }).end(file.body);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** The pairedItem of each output item of a node, as n8n recorded it. */
function pairedItems(
	run: StoredExecution,
	nodeName: string,
): Array<IPairedItemData | IPairedItemData[] | number | undefined> {
	const items = run.data.resultData.runData[nodeName]?.[0]?.data?.main?.[0] ?? [];
	return items.map((item) => item.pairedItem);
}

describe('the action node in n8n', () => {
	let n8n: N8nHarness;

	async function run(
		name: string,
		items: InputItem[],
		chain: ChainNode[],
		outcome: 'success' | 'failure' = 'success',
	): Promise<StoredExecution> {
		return await n8n.run(chainWorkflow(name, items, chain), { expect: outcome });
	}

	/** The document the service received for a session, byte for byte. */
	async function receivedFile(sessionId: string): Promise<string> {
		const response = await call(n8n.emulator, 'GET', `/api/files/${sessionId}`, {
			customer: false,
		});
		expect(response.status).toBe(200);
		return response.text;
	}

	/** The output item of a document uploaded from the binary file catalogue.xml, and what the service stored. */
	async function expectUploadedCatalogue(uploaded: IDataObject, catalogue: string): Promise<void> {
		expect(uploaded).toMatchObject({
			sessionId: expect.stringMatching(GUID),
			fileName: 'catalogue.xml',
			bytes: Buffer.byteLength(catalogue),
			validation: 'passed',
		});
		expect(await receivedFile(String(uploaded.sessionId))).toBe(catalogue);
	}

	function requests(route: string): number {
		return n8n.emulator.stats().requests[route] ?? 0;
	}

	beforeAll(async () => {
		n8n = await prepareN8n();
	});

	afterAll(async () => {
		await n8n?.stop();
	});

	beforeEach(() => {
		n8n.emulator.reset();
	});

	describe('Document', () => {
		test('Upload from Text and Upload Custom XML: one upload per item, the document as given, items paired through', async () => {
			const result = await run('Text and custom uploads', xmlItems(CHAIR, TABLE), [
				actionNode('Upload', { resource: 'document', operation: 'upload', ...TEXT_SOURCE }),
				// Reaches back to the Code node's items through the paired items of Upload.
				actionNode('Upload Custom', {
					resource: 'document',
					operation: 'uploadCustom',
					source: 'text',
					xml: `={{ $('${ITEMS_NAME}').item.json.xml }}`,
					options: { contentType: 'text/xml' },
				}),
			]);

			const uploaded = nodeItems(result, 'Upload');
			expect(uploaded).toEqual([
				{
					sessionId: expect.stringMatching(GUID),
					fileName: null,
					bytes: Buffer.byteLength(CHAIR),
					validation: 'passed',
					contentType: 'application/xml',
					endpoint: 'xml',
					customerId: '1001',
					uploadedAt: expect.any(String),
				},
				expect.objectContaining({
					sessionId: expect.stringMatching(GUID),
					bytes: Buffer.byteLength(TABLE),
				}),
			]);
			expect(pairedItems(result, 'Upload')).toEqual([{ item: 0 }, { item: 1 }]);
			const custom = nodeItems(result, 'Upload Custom');
			expect(custom).toEqual([
				expect.objectContaining({
					endpoint: 'xml/custom',
					contentType: 'text/xml',
					bytes: Buffer.byteLength(CHAIR),
				}),
				expect.objectContaining({
					endpoint: 'xml/custom',
					contentType: 'text/xml',
					bytes: Buffer.byteLength(TABLE),
				}),
			]);
			expect(pairedItems(result, 'Upload Custom')).toEqual([{ item: 0 }, { item: 1 }]);

			const received = n8n.emulator.uploads();
			expect(
				received.map(({ id, route, customerServiceId }) => ({ id, route, customerServiceId })),
			).toEqual([
				{ id: uploaded[0].sessionId, route: 'xml', customerServiceId: 1001 },
				{ id: uploaded[1].sessionId, route: 'xml', customerServiceId: 1001 },
				{ id: custom[0].sessionId, route: 'custom', customerServiceId: 1001 },
				{ id: custom[1].sessionId, route: 'custom', customerServiceId: 1001 },
			]);
			expect(await receivedFile(String(uploaded[0].sessionId))).toBe(CHAIR);
			expect(await receivedFile(String(custom[1].sessionId))).toBe(TABLE);
		});

		test('Upload from Binary File: the file of the named binary field, byte for byte', async () => {
			const catalogue =
				'<?xml version="1.0" encoding="UTF-8"?>\n<Products><Product><Sku>CF-1</Sku><Name>Café crème</Name></Product></Products>';

			const result = await run(
				'Binary upload',
				[
					{
						json: { sku: 'CF-1' },
						binary: {
							catalogue: {
								data: catalogue,
								mimeType: 'application/xml',
								fileName: 'catalogue.xml',
							},
						},
					},
				],
				[
					actionNode('Upload', {
						resource: 'document',
						operation: 'upload',
						source: 'binary',
						binaryPropertyName: 'catalogue',
					}),
				],
			);

			const [uploaded] = nodeItems(result, 'Upload');
			await expectUploadedCatalogue(uploaded, catalogue);
			expect(n8n.emulator.stats().uploads).toBe(1);
		});

		test('files in n8n’s binary data store (downloaded by HTTP Request) are streamed: a document and an image', async () => {
			const catalogue = `<?xml version="1.0" encoding="UTF-8"?>\n<Products>${'<Product><Sku>DL-1</Sku><Name>Downloaded</Name></Product>'.repeat(200)}</Products>`;
			const { url, server } = await serveFiles({
				'/feeds/catalogue.xml': { body: catalogue, contentType: 'application/xml' },
				'/photos/front.png': { body: FRONT, contentType: 'image/png' },
			});
			let result: StoredExecution;
			try {
				result = await run(
					'Stored binary data',
					[{ json: { sku: 'DL-1' } }],
					[
						downloadNode('Download Catalogue', `${url}/feeds/catalogue.xml`),
						actionNode('Upload', {
							resource: 'document',
							operation: 'upload',
							source: 'binary',
							binaryPropertyName: 'data',
						}),
						downloadNode('Download Photo', `${url}/photos/front.png`),
						actionNode('Upload Photo', {
							resource: 'image',
							operation: 'upload',
							binaryProperties: 'data',
							options: { skipExisting: true, rememberKnownImages: false },
						}),
					],
				);
			} finally {
				server.close();
			}

			// A reference into the store, not data inline in the item: the path this test is about.
			for (const download of ['Download Catalogue', 'Download Photo']) {
				const [item] = result.data.resultData.runData[download][0].data?.main?.[0] ?? [];
				expect(item?.binary?.data?.id).toMatch(/^filesystem(-v2)?:/);
			}
			const [uploaded] = nodeItems(result, 'Upload');
			await expectUploadedCatalogue(uploaded, catalogue);
			const [photo] = nodeItems(result, 'Upload Photo');
			expect(photo).toMatchObject({
				hashcode: expect.stringMatching(HASHCODE),
				fileName: 'front.png',
				mimeType: 'image/png',
				md5: md5(FRONT),
				bytes: FRONT.length,
				skipped: false,
			});
			expect(n8n.emulator.images()).toEqual([
				expect.objectContaining({
					hashcode: photo.hashcode,
					md5: md5(FRONT),
					size: FRONT.length,
					fileName: 'front.png',
				}),
			]);
		});

		test('Build From Items: one document for all items, one upload, the output paired to every item', async () => {
			const products = [
				{ '@id': 'P-1', Name: 'Oak Chair', Price: 89 },
				{ '@id': 'P-2', Name: 'Table & Bench', Price: 349 },
				{ '@id': 'P-3', Name: 'Cushion <linen>', Price: 19.5 },
			];

			const result = await run(
				'Build from items',
				products.map((json) => ({ json })),
				[
					actionNode('Upload', {
						resource: 'document',
						operation: 'upload',
						source: 'items',
						rootElement: 'Catalogue',
						itemElement: 'Article',
					}),
				],
			);

			const uploaded = nodeItems(result, 'Upload');
			expect(uploaded).toHaveLength(1);
			expect(pairedItems(result, 'Upload')).toEqual([[{ item: 0 }, { item: 1 }, { item: 2 }]]);
			expect(n8n.emulator.stats().uploads).toBe(1);
			const document = await receivedFile(String(uploaded[0].sessionId));
			expect(Buffer.byteLength(document)).toBe(uploaded[0].bytes);
			expect(document.startsWith('<?xml version="1.0" encoding="UTF-8"?>')).toBe(true);
			expect(document).toMatch(/<Catalogue>[\s\S]*<\/Catalogue>\s*$/);
			expect(document.match(/<Article id="P-\d">/g)).toEqual([
				'<Article id="P-1">',
				'<Article id="P-2">',
				'<Article id="P-3">',
			]);
			expect(document).toContain('<Name>Table &amp; Bench</Name>');
			expect(document).toContain('<Name>Cushion &lt;linen&gt;</Name>');
			expect(document).toContain('<Price>19.5</Price>');
		});

		test('Wait for Completion: waits for every upload and reports a failed one with its error, fetched when asked', async () => {
			const slow = CHAIR.replace('<Products>', '<Products><!--emulator:processing-ms=2000-->');

			const result = await run('Upload and wait', xmlItems(slow, FAILING), [
				actionNode('Upload and Wait', {
					resource: 'document',
					operation: 'upload',
					...TEXT_SOURCE,
					options: { waitForCompletion: true, includeErrorMessage: true, timeout: 120 },
				}),
			]);

			const [succeeded, failed] = nodeItems(result, 'Upload and Wait');
			expect(succeeded).toMatchObject({
				sessionId: expect.stringMatching(GUID),
				status: 'succeeded',
			});
			expect(succeeded).not.toHaveProperty('errorUrl');
			expect(failed).toMatchObject({
				sessionId: expect.stringMatching(GUID),
				status: 'failed',
				errorUrl: `${n8n.emulator.url}/api/status/${String(failed.sessionId)}/errors`,
				errorMessage: 'Processing of the document ended with 1 error(s).',
				errorDocument: expect.objectContaining({
					errors: [expect.objectContaining({ code: 'ProcessingFailed' })],
				}),
			});
			expect(n8n.emulator.uploads().map((upload) => upload.state)).toEqual(['succeeded', 'failed']);
		});

		test('Validate Before Upload: a broken document stops the run before any request', async () => {
			const result = await run(
				'Validate first',
				xmlItems(CHAIR, BROKEN),
				[actionNode('Upload', { resource: 'document', operation: 'upload', ...TEXT_SOURCE })],
				'failure',
			);

			expect(runError(result)).toMatchObject({
				node: 'Upload',
				message: expect.stringMatching(
					/^The XML document of item 1 is not well-formed: .*\(line 4, column \d+\)$/,
				),
			});
			expect(n8n.emulator.stats().uploads).toBe(0);
			expect(n8n.emulator.stats().requests).toEqual({});
		});

		test('Validate Before Upload off: the service judges the document, and the error says what was uploaded', async () => {
			const result = await run(
				'Let the service judge',
				xmlItems(CHAIR, BROKEN),
				[
					actionNode('Upload', {
						resource: 'document',
						operation: 'upload',
						...TEXT_SOURCE,
						options: { validate: false },
					}),
				],
				'failure',
			);

			const [upload] = n8n.emulator.uploads();
			expect(runError(result)).toMatchObject({
				node: 'Upload',
				message: 'The request is invalid.',
			});
			expect(runError(result)?.description).toContain(`item 0 -> ${upload.id}`);
			expect(n8n.emulator.stats()).toMatchObject({ uploads: 1, requests: { 'PUT /api/xml': 2 } });
		});

		test('Continue on fail: the broken item becomes an error item, the others are uploaded', async () => {
			const result = await run('Continue on fail', xmlItems(CHAIR, BROKEN, TABLE), [
				actionNode(
					'Upload',
					{ resource: 'document', operation: 'upload', ...TEXT_SOURCE },
					{ onError: 'continueRegularOutput' },
				),
			]);

			const [first, broken, third] = nodeItems(result, 'Upload');
			const ids = n8n.emulator.uploads().map((upload) => upload.id);
			expect(ids).toEqual([first.sessionId, third.sessionId]);
			expect(ids).toEqual([expect.stringMatching(GUID), expect.stringMatching(GUID)]);
			expect(broken).toEqual({
				error: expect.stringMatching(/^The XML document of item 1 is not well-formed/),
				errorDetails: expect.stringContaining('Nothing was uploaded for it'),
			});
			expect(pairedItems(result, 'Upload')).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
		});

		test('Retry On Fail: a document that reached the service on the failed try is not uploaded again', async () => {
			const fault = async (rule: IDataObject) => {
				const response = await call(n8n.emulator, 'POST', '/__emulator/faults', {
					auth: false,
					customer: false,
					headers: { 'content-type': 'application/json' },
					body: JSON.stringify({ path: '/api/xml', ...rule }),
				});
				expect(response.status).toBe(200);
			};
			// The first upload is stored at once but answered late, so that the second can be made
			// to fail once it is known to have arrived; n8n then runs the node again.
			await fault({ count: 1, kind: 'slow', delayMs: 4000 });
			const id = await n8n.importWorkflow(
				chainWorkflow('Retry on fail', xmlItems(CHAIR, TABLE), [
					actionNode(
						'Upload',
						{ resource: 'document', operation: 'upload', ...TEXT_SOURCE },
						{ retryOnFail: true, maxTries: 2, waitBetweenTries: 0 },
					),
				]),
			);
			const running = n8n.executeWorkflow(id);
			const deadline = Date.now() + 60_000;
			while (n8n.emulator.uploads().length === 0 && Date.now() < deadline) {
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
			await fault({ count: 1, kind: '500' });
			const result = await running;

			const ids = n8n.emulator.uploads().map((upload) => upload.id);
			expect(ids).toHaveLength(2);
			expect(n8n.emulator.stats().faults).toBe(2);
			expect(nodeItems(result, 'Upload')).toEqual([
				expect.objectContaining({ sessionId: ids[0], reused: true }),
				expect.objectContaining({ sessionId: ids[1] }),
			]);
			expect(nodeItems(result, 'Upload')[1]).not.toHaveProperty('reused');
		});

		test('Get Many and the customer option: an upload for another customer node lands there and is listed there', async () => {
			// Made before the run by another client, for the credential's own customer (1001).
			const north = await putXml(n8n.emulator, TABLE);
			expect(north.status).toBe(202);

			const id = await n8n.importWorkflow({
				...chainWorkflow('Customer override', xmlItems(CHAIR), [
					actionNode('Upload South', {
						resource: 'document',
						operation: 'upload',
						...TEXT_SOURCE,
						options: { customer: '1002' },
					}),
					actionNode('List South', {
						resource: 'document',
						operation: 'getMany',
						returnAll: true,
						options: { customer: '1002' },
					}),
					// A date from an expression reaches the node as a Luxon DateTime.
					actionNode('List North', {
						resource: 'document',
						operation: 'getMany',
						date: '={{ $today }}',
						returnAll: true,
					}),
				]),
				// The emulator lists by UTC date; "today" is a day of the workflow's time zone.
				settings: { executionOrder: 'v1', timezone: 'UTC' },
			});
			const result = await n8n.executeWorkflow(id);

			const [uploaded] = nodeItems(result, 'Upload South');
			expect(uploaded).toMatchObject({
				sessionId: expect.stringMatching(GUID),
				customerId: '1002',
			});
			expect(
				n8n.emulator
					.uploads()
					.map(({ id: session, customerServiceId }) => ({ session, customerServiceId })),
			).toEqual([
				{ session: north.text, customerServiceId: 1001 },
				{ session: uploaded.sessionId, customerServiceId: 1002 },
			]);
			const south = nodeItems(result, 'List South');
			expect(south).toEqual([
				expect.objectContaining({
					id: uploaded.sessionId,
					fileLenght: Buffer.byteLength(CHAIR),
					sentBy: { name: 'South Shop', serviceId: 1002, externalId: 'SHOP-SOUTH' },
					errors: [],
				}),
			]);
			expect(south[0]).toEqual(
				expect.objectContaining({
					receivedAt: expect.any(String),
					file: expect.any(String),
					result: expect.any(String),
				}),
			);
			const listedNorth = nodeItems(result, 'List North');
			expect(
				listedNorth.map((record) => [record.id, (record.sentBy as IDataObject).serviceId]),
			).toEqual([[north.text, 1001]]);
		});
	});

	describe('Upload Session', () => {
		test('Is Done, Get Result and Wait for Completion on the sessions of an upload in the same workflow', async () => {
			const result = await run('Session chain', xmlItems(CHAIR, ENDLESS, FAILING), [
				actionNode('Upload', { resource: 'document', operation: 'upload', ...TEXT_SOURCE }),
				actionNode('Is Done', {
					resource: 'uploadSession',
					operation: 'isDone',
					sessionId: '={{ $json.sessionId }}',
				}),
				actionNode('Get Result', {
					resource: 'uploadSession',
					operation: 'getResult',
					sessionId: '={{ $json.sessionId }}',
					options: { includeErrorMessage: true },
				}),
				actionNode('Wait', {
					resource: 'uploadSession',
					operation: 'waitForCompletion',
					sessionIds: '={{ $json.sessionId }}',
					options: { timeout: 6 },
				}),
			]);

			const ids = nodeItems(result, 'Upload').map((item) => String(item.sessionId));
			const [done, endless, failed] = ids;
			expect(nodeItems(result, 'Is Done')).toEqual([
				{ sessionId: done, done: true },
				{ sessionId: endless, done: false },
				{ sessionId: failed, done: true },
			]);
			const errorUrl = `${n8n.emulator.url}/api/status/${failed}/errors`;
			expect(nodeItems(result, 'Get Result')).toEqual([
				{ sessionId: done, status: 'succeeded' },
				{ sessionId: endless, status: 'processing' },
				{
					sessionId: failed,
					status: 'failed',
					errorUrl,
					errorMessage: 'Processing of the document ended with 1 error(s).',
					errorDocument: expect.objectContaining({
						errors: [expect.objectContaining({ code: 'ProcessingFailed' })],
					}),
					errorText: expect.stringContaining('"ProcessingFailed"'),
				},
			]);
			// The error message is fetched only where asked for; the endless session is given up at the timeout.
			expect(nodeItems(result, 'Wait')).toEqual([
				{ sessionId: done, status: 'succeeded' },
				{ sessionId: endless, status: 'processing', timedOut: true },
				{ sessionId: failed, status: 'failed', errorUrl },
			]);
			expect(pairedItems(result, 'Wait')).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
			// Wait asked the endless session again after its first round: it did wait.
			expect(requests('GET /api/status/{id}/result')).toBeGreaterThanOrEqual(3 + 3 + 1);
			expect(requests('GET /api/status/{id}/errors')).toBe(1);
		});
	});

	describe('Image', () => {
		test('Upload: two images of one item in one request, with their hashcodes and MD5s', async () => {
			const result = await run(
				'Two images',
				[
					{
						json: { sku: 'CH-1' },
						binary: {
							front: { data: FRONT, mimeType: 'image/png', fileName: 'chair-front.png' },
							back: { data: BACK, mimeType: 'image/png', fileName: 'chair-back.png' },
						},
					},
				],
				[
					actionNode('Upload Images', {
						resource: 'image',
						operation: 'upload',
						imagesFrom: 'named',
						binaryProperties: 'front, back',
						options: { clippingPath: 'Path 1', invert: true, rememberKnownImages: false },
					}),
				],
			);

			const images = nodeItems(result, 'Upload Images');
			expect(images).toEqual([
				{
					hashcode: expect.stringMatching(HASHCODE),
					fileName: 'chair-front.png',
					mimeType: 'image/png',
					md5: md5(FRONT),
					bytes: FRONT.length,
					binaryProperty: 'front',
				},
				{
					hashcode: expect.stringMatching(HASHCODE),
					fileName: 'chair-back.png',
					mimeType: 'image/png',
					md5: md5(BACK),
					bytes: BACK.length,
					binaryProperty: 'back',
				},
			]);
			expect(pairedItems(result, 'Upload Images')).toEqual([{ item: 0 }, { item: 0 }]);
			expect(requests('POST /api/images')).toBe(1);
			const stored = n8n.emulator.images();
			expect(
				stored.map(({ hashcode, md5: storedMd5, fileName, size, invert, clippingPath }) => ({
					hashcode,
					md5: storedMd5,
					fileName,
					size,
					invert,
					clippingPath,
				})),
			).toEqual(
				expect.arrayContaining([
					{
						hashcode: images[0].hashcode,
						md5: md5(FRONT),
						fileName: 'chair-front.png',
						size: FRONT.length,
						invert: true,
						clippingPath: 'Path 1',
					},
					{
						hashcode: images[1].hashcode,
						md5: md5(BACK),
						fileName: 'chair-back.png',
						size: BACK.length,
						invert: true,
						clippingPath: 'Path 1',
					},
				]),
			);
			expect(stored).toHaveLength(2);
		});

		test('Skip Existing: a second run uploads nothing; Check Exists and Find by MD5 know the images', async () => {
			const id = await n8n.importWorkflow(
				chainWorkflow(
					'Skip existing',
					[
						{
							json: { sku: 'CH-1' },
							binary: { data: { data: FRONT, mimeType: 'image/png', fileName: 'chair.png' } },
						},
						{
							json: { sku: 'TB-1' },
							binary: { data: { data: BACK, mimeType: 'image/png', fileName: 'table.png' } },
						},
					],
					[
						actionNode('Upload New', {
							resource: 'image',
							operation: 'upload',
							binaryProperties: 'data',
							options: { skipExisting: true, rememberKnownImages: false },
						}),
						actionNode('Check Exists', {
							resource: 'image',
							operation: 'checkExists',
							hashcode: '={{ $json.hashcode }}',
						}),
						actionNode('Find by MD5', {
							resource: 'image',
							operation: 'find',
							searchBy: 'md5',
							md5: "={{ $('Upload New').item.json.md5 }}",
						}),
					],
				),
			);

			const first = await n8n.executeWorkflow(id);
			const uploaded = nodeItems(first, 'Upload New');
			expect(uploaded).toEqual([
				expect.objectContaining({
					hashcode: expect.stringMatching(HASHCODE),
					md5: md5(FRONT),
					skipped: false,
				}),
				expect.objectContaining({
					hashcode: expect.stringMatching(HASHCODE),
					md5: md5(BACK),
					skipped: false,
				}),
			]);
			// The two items' images in one request.
			expect(requests('POST /api/images')).toBe(1);

			const second = await n8n.executeWorkflow(id);
			expect(nodeItems(second, 'Upload New')).toEqual([
				{ ...uploaded[0], skipped: true },
				{ ...uploaded[1], skipped: true },
			]);
			expect(requests('POST /api/images')).toBe(1);
			// Per run: one look-up per image before uploading, one per Find by MD5.
			expect(requests('GET /api/images')).toBe(2 * (2 + 2));

			for (const runOf of [first, second]) {
				expect(nodeItems(runOf, 'Check Exists')).toEqual([
					{ hashcode: uploaded[0].hashcode, exists: true },
					{ hashcode: uploaded[1].hashcode, exists: true },
				]);
				expect(nodeItems(runOf, 'Find by MD5')).toEqual([
					{ found: true, hashcode: uploaded[0].hashcode, md5: md5(FRONT) },
					{ found: true, hashcode: uploaded[1].hashcode, md5: md5(BACK) },
				]);
			}
		});

		test('Find by URI an image a processed document referenced; unknown images are found: false and exists: false', async () => {
			const imageUrl = 'https://images.example.com/products/oak-chair.jpg';
			const unknownMd5 = md5(Buffer.from('never uploaded'));
			const unknownHashcode = 'f'.repeat(32);
			const document = `<Products><Product><Sku>CH-1</Sku><ImageUrl>${imageUrl}</ImageUrl></Product></Products>`;

			const result = await run('Find images', xmlItems(document), [
				actionNode('Upload', {
					resource: 'document',
					operation: 'upload',
					...TEXT_SOURCE,
					options: { waitForCompletion: true, timeout: 60 },
				}),
				actionNode('Find by URI', {
					resource: 'image',
					operation: 'find',
					searchBy: 'uri',
					uri: imageUrl,
				}),
				actionNode('Check Exists', {
					resource: 'image',
					operation: 'checkExists',
					hashcode: '={{ $json.hashcode }}',
				}),
				actionNode('Find Unknown URI', {
					resource: 'image',
					operation: 'find',
					searchBy: 'uri',
					uri: 'https://images.example.com/products/missing.jpg',
				}),
				actionNode('Find Unknown MD5', {
					resource: 'image',
					operation: 'find',
					searchBy: 'md5',
					md5: unknownMd5,
				}),
				actionNode('Check Unknown', {
					resource: 'image',
					operation: 'checkExists',
					hashcode: unknownHashcode,
				}),
			]);

			expect(nodeItems(result, 'Upload')).toEqual([
				expect.objectContaining({ status: 'succeeded' }),
			]);
			const [known] = n8n.emulator.images();
			expect(known).toMatchObject({ uris: [imageUrl], md5: null });
			expect(nodeItems(result, 'Find by URI')).toEqual([
				{ found: true, hashcode: known.hashcode, uri: imageUrl },
			]);
			expect(nodeItems(result, 'Check Exists')).toEqual([
				{ hashcode: known.hashcode, exists: true },
			]);
			expect(nodeItems(result, 'Find Unknown URI')).toEqual([
				{ found: false, uri: 'https://images.example.com/products/missing.jpg' },
			]);
			expect(nodeItems(result, 'Find Unknown MD5')).toEqual([{ found: false, md5: unknownMd5 }]);
			expect(nodeItems(result, 'Check Unknown')).toEqual([
				{ hashcode: unknownHashcode, exists: false },
			]);
		});
	});

	describe('Account', () => {
		test('Get Environment Info leaves the auth token out unless asked for', async () => {
			const result = await run(
				'Environment info',
				[{ json: {} }],
				[
					actionNode('Info', { resource: 'account', operation: 'getEnvironmentInfo' }),
					actionNode('Info With Token', {
						resource: 'account',
						operation: 'getEnvironmentInfo',
						options: { includeAuthToken: true },
					}),
				],
			);

			const [info] = nodeItems(result, 'Info');
			expect(info).toMatchObject({
				userName: DEFAULT_ACCOUNT.username,
				customerId: 1001,
				availableCustomers: { '1001': 'North Shop', '1002': 'South Shop', '1003': 'Head Office' },
			});
			expect(info).not.toHaveProperty('authToken');
			expect(info).not.toHaveProperty('authTokenBytes');
			const [withToken] = nodeItems(result, 'Info With Token');
			expect(withToken).toMatchObject({
				...info,
				authToken: expect.objectContaining({
					userName: DEFAULT_ACCOUNT.username,
					customerId: 1001,
				}),
				authTokenBytes: expect.any(String),
			});
			expect(requests('GET /api/auth/me')).toBe(2);
		});
	});

	describe('Credentials', () => {
		const WRONG_PASSWORD = 'wrong-Secret-4711';
		const secrets = [
			WRONG_PASSWORD,
			Buffer.from(`${DEFAULT_ACCOUNT.username}:${WRONG_PASSWORD}`).toString('base64'),
			DEFAULT_ACCOUNT.password,
			Buffer.from(`${DEFAULT_ACCOUNT.username}:${DEFAULT_ACCOUNT.password}`).toString('base64'),
		];
		let wrong: { id: string; name: string };

		beforeAll(async () => {
			wrong = await n8n.createCredential('Wrong password', { password: WRONG_PASSWORD });
		});

		/**
		 * Runs the workflow; what n8n printed meanwhile and what its API hands out about the run (the
		 * execution as the editor shows it) must hold no secret.
		 */
		async function runKeepingSecrets(
			workflowId: string,
			outcome: 'success' | 'failure',
		): Promise<StoredExecution> {
			const printedBefore = n8n.server.log().length;
			const result = await n8n.executeWorkflow(workflowId, { expect: outcome });
			const printed = n8n.server.log().slice(printedBefore);
			const shown = JSON.stringify(
				await n8n.server.request('GET', `/rest/executions/${result.id}`),
			);
			for (const secret of secrets) {
				expect(printed).not.toContain(secret);
				expect(shown).not.toContain(secret);
			}
			return result;
		}

		test('a refused password fails the run with the service’s 401 message for the item, and nothing n8n shows holds a secret', async () => {
			const id = await n8n.importWorkflow(
				chainWorkflow('Wrong password', xmlItems(CHAIR, TABLE), [
					actionNode(
						'Upload',
						{ resource: 'document', operation: 'upload', ...TEXT_SOURCE },
						{ credential: wrong },
					),
				]),
			);

			const result = await runKeepingSecrets(id, 'failure');

			const error = result.data.resultData.error as
				| (IDataObject & { context?: IDataObject })
				| undefined;
			expect(runError(result)).toMatchObject({
				node: 'Upload',
				message: 'Authorization has been denied for this request.',
			});
			expect(error).toMatchObject({
				httpCode: '401',
				context: expect.objectContaining({ itemIndex: 0 }),
			});
			expect(error?.description).toMatch(/^The credential's login is refused as well/);
			// The upload, then the one check of the credential's own login that names the cause.
			expect(n8n.emulator.stats()).toMatchObject({ uploads: 0, rejected401: 2 });
		});

		test('with continue on fail, each item carries the 401 message, and nothing n8n shows holds a secret', async () => {
			const id = await n8n.importWorkflow(
				chainWorkflow('Wrong password, continue', xmlItems(CHAIR, TABLE), [
					actionNode(
						'Upload',
						{ resource: 'document', operation: 'upload', ...TEXT_SOURCE },
						{ credential: wrong, onError: 'continueRegularOutput' },
					),
				]),
			);

			const result = await runKeepingSecrets(id, 'success');

			expect(nodeItems(result, 'Upload')).toEqual([
				expect.objectContaining({ error: 'Authorization has been denied for this request.' }),
				expect.objectContaining({ error: 'Authorization has been denied for this request.' }),
			]);
			// Two uploads and one check of the login for the run, not one per item.
			expect(n8n.emulator.stats()).toMatchObject({ uploads: 0, rejected401: 3 });
		});
	});
});
