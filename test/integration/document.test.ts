import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';

import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { prepareDocuments } from '../../nodes/ProductDataIntegration/actions/document/documents';
import { uploadDocuments } from '../../nodes/ProductDataIntegration/actions/document/uploadDocuments';
import { ItemFailures } from '../../nodes/ProductDataIntegration/actions/itemErrors';
import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import {
	binaryItem,
	createContext,
	runNode,
	setBinaryDataMode,
} from '../../scripts/n8n/in-process';
import { call, putXml } from '../../scripts/emulator/client';
import { FAST_BUCKET, fastCredentials, useEmulator } from '../helpers/emulator';
import { listenLocal } from '../helpers/server';
import { postControl } from '../helpers/service';

const node = new ProductDataIntegration();
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const GOOD =
	'<?xml version="1.0" encoding="UTF-8"?>\n<Products><Product><Sku>A-1</Sku></Product></Products>';
const BROKEN = '<Products>\n  <Product>\n    <Sku>A-1</Sku>\n  </Products>';
const FAILING = '<Products><!--emulator:fail--><Product><Sku>F-1</Sku></Product></Products>';

function upload(parameters: IDataObject, operation = 'upload'): INodeParameters {
	return { resource: 'document', operation, ...parameters } as INodeParameters;
}

function textItems(...documents: string[]): INodeExecutionData[] {
	return documents.map((xml) => ({ json: { xml } }));
}

const TEXT_SOURCE = { source: 'text', xml: '={{ $json.xml }}' };

describe('Document: Upload and Upload Custom XML', () => {
	const { emulator, credentials } = useEmulator(FAST_BUCKET);

	async function uploadedFile(
		sessionId: string,
	): Promise<{ contentType: string | null; text: string }> {
		const response = await call(emulator, 'GET', `/api/files/${sessionId}`);
		expect(response.status).toBe(200);
		return { contentType: response.headers['content-type'] ?? null, text: response.text };
	}

	function putRequests(): number {
		const { requests } = emulator.stats();
		return (requests['PUT /api/xml'] ?? 0) + (requests['PUT /api/xml/custom'] ?? 0);
	}

	beforeEach(async () => {
		await setBinaryDataMode('default');
	});

	describe('sources', () => {
		it('uploads text to /api/xml and outputs the session with what was sent', async () => {
			const { output, error } = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0]).toHaveLength(1);
			const [{ json, pairedItem }] = output[0];
			expect(pairedItem).toEqual({ item: 0 });
			expect(json).toEqual({
				sessionId: expect.stringMatching(GUID),
				fileName: null,
				bytes: Buffer.byteLength(GOOD),
				validation: 'passed',
				contentType: 'application/xml',
				endpoint: 'xml',
				customerId: '1001',
				uploadedAt: expect.any(String),
			});
			expect(Number.isNaN(Date.parse(json.uploadedAt as string))).toBe(false);
			const [record] = emulator.uploads();
			expect(record).toMatchObject({
				id: json.sessionId,
				route: 'xml',
				byteLength: Buffer.byteLength(GOOD),
			});
			expect(await uploadedFile(json.sessionId as string)).toEqual({
				contentType: 'application/xml',
				text: GOOD,
			});
		});

		it('uploads custom XML to /api/xml/custom with the chosen content type and customer', async () => {
			const { output, error } = await runNode({
				node,
				parameters: upload(
					{ ...TEXT_SOURCE, options: { contentType: 'text/xml', customer: '1002' } },
					'uploadCustom',
				),
				items: textItems(GOOD),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			const [{ json }] = output[0];
			expect(json).toMatchObject({
				endpoint: 'xml/custom',
				contentType: 'text/xml',
				customerId: '1002',
			});
			const [record] = emulator.uploads();
			expect(record).toMatchObject({
				id: json.sessionId,
				route: 'custom',
				customerServiceId: 1002,
			});
			expect(emulator.stats().requests['PUT /api/xml/custom']).toBe(1);
			expect((await uploadedFile(json.sessionId as string)).contentType).toBe('text/xml');
		});

		it('uploads the binary file of each item, named by its file name', async () => {
			const items = [
				await binaryItem(GOOD, 'first.xml', 'application/xml'),
				await binaryItem(GOOD.replace('A-1', 'B-2'), 'second.xml', 'application/xml'),
			];
			const { output, error } = await runNode({
				node,
				parameters: upload({ source: 'binary', binaryPropertyName: 'data' }),
				items,
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0].map(({ json, pairedItem }) => [json.fileName, pairedItem])).toEqual([
				['first.xml', { item: 0 }],
				['second.xml', { item: 1 }],
			]);
			expect(emulator.stats().uploads).toBe(2);
			expect((await uploadedFile(output[0][1].json.sessionId as string)).text).toContain('B-2');
		});

		it('streams a large file from the filesystem binary store and checks it on the way', async () => {
			await setBinaryDataMode('filesystem');
			const products = Array.from(
				{ length: 40_000 },
				(_, index) =>
					`\t<Product id="${index}"><Sku>SKU-${index}</Sku><Name>Name &amp; more ${index}</Name></Product>\n`,
			);
			const large = `<?xml version="1.0" encoding="UTF-8"?>\n<Products>\n${products.join('')}</Products>\n`;
			const item = await binaryItem(large, 'catalogue.xml', 'application/xml');
			expect(item.binary?.data.id).toBeTruthy();

			const { output, error } = await runNode({
				node,
				parameters: upload({ source: 'binary' }),
				items: [item],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			const [{ json }] = output[0];
			expect(json).toMatchObject({
				bytes: Buffer.byteLength(large),
				validation: 'passed',
				fileName: 'catalogue.xml',
			});
			const [record] = emulator.uploads();
			expect(record.byteLength).toBe(Buffer.byteLength(large));
			expect((await uploadedFile(json.sessionId as string)).text).toBe(large);
		});

		it('finds a problem deep inside a stored file with its line and column, before any request', async () => {
			await setBinaryDataMode('filesystem');
			const lines = Array.from(
				{ length: 20_000 },
				(_, index) => `<Product><Sku>${index}</Sku></Product>`,
			);
			lines[15_000] = '<Product><Sku>15000</Sku></Prodcut>';
			const item = await binaryItem(
				`<Products>\n${lines.join('\n')}\n</Products>`,
				'broken.xml',
				'application/xml',
			);

			const { error } = await runNode({
				node,
				parameters: upload({ source: 'binary' }),
				items: [item],
				credentials: credentials(),
			});

			expect(error?.message).toContain('not well-formed');
			expect(error?.message).toContain("found 'Prodcut'");
			expect(error?.message).toContain('line 15002, column 26');
			expect(putRequests()).toBe(0);
		});
	});

	describe('checks before any request', () => {
		it('fails a broken document with its line and column and sends nothing, not even the good ones', async () => {
			const { output, error } = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD, BROKEN),
				credentials: credentials(),
			});

			expect(output).toEqual([]);
			expect(error?.message).toBe(
				"The XML document of item 1 is not well-formed: Expected the closing tag 'Product' (opened at line 2, column 3), found 'Products' (line 4, column 3)",
			);
			expect(emulator.stats().uploads).toBe(0);
			expect(putRequests()).toBe(0);
			expect(emulator.stats().requests).toEqual({});
		});

		it('names the item and the field when the binary field is missing', async () => {
			const { error } = await runNode({
				node,
				parameters: upload({ source: 'binary', binaryPropertyName: 'file' }),
				items: [await binaryItem(GOOD, 'a.xml', 'application/xml')],
				credentials: credentials(),
			});

			expect(error?.message).toBe('Item 0 has no binary field "file" (Input Binary Field)');
			expect(error?.description).toContain('Binary fields of this item: data');
			expect(emulator.stats().requests).toEqual({});
		});

		it('names the item when the XML field is empty', async () => {
			const { error } = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD, '  '),
				credentials: credentials(),
			});

			expect(error?.message).toBe('The XML field of item 1 is empty');
			expect(emulator.stats().requests).toEqual({});
		});

		it('sends a broken document when validation is off, and says the check was skipped', async () => {
			const first = await runNode({
				node,
				parameters: upload({ ...TEXT_SOURCE, options: { validate: false } }),
				items: textItems(GOOD),
				credentials: credentials(),
			});
			expect(first.output[0][0].json.validation).toBe('skipped: Validate Before Upload is off');

			const { error } = await runNode({
				node,
				parameters: upload({ ...TEXT_SOURCE, options: { validate: false } }),
				items: textItems(BROKEN),
				credentials: credentials(),
			});
			expect(error?.message).toBe(emulatorInvalidMessage);
			expect(putRequests()).toBe(2);
		});
	});

	describe('documents XML-encoded as a whole', () => {
		const ENCODED = GOOD.replace(/&/g, '&amp;')
			.replace(/</g, '&lt;')
			.replace(/>/g, '&gt;')
			.replace(/"/g, '&quot;');
		const ESCAPED_TEXT =
			'<?xml version="1.0" encoding="UTF-8"?>\n<Products><Product><Sku>A-1</Sku><Description>&lt;p&gt;Oak &amp;amp; steel&lt;/p&gt;</Description></Product></Products>';

		it('refuses encoded text before any request, saying how to fix it, even with validation off', async () => {
			for (const options of [{}, { validate: false }]) {
				const { output, error } = await runNode({
					node,
					parameters: upload({ ...TEXT_SOURCE, options }),
					items: textItems(GOOD, `\n  ${ENCODED}`),
					credentials: credentials(),
				});

				expect(output).toEqual([]);
				expect(error?.message).toBe(
					'The XML document of item 1 is XML-encoded as a whole: it starts with "&lt;" where the document\'s "<" belongs',
				);
				expect(error?.description).toContain('Decode it first');
				expect(emulator.stats().requests).toEqual({});
			}
		});

		it('refuses an encoded binary file, held inline or streamed from the store', async () => {
			for (const mode of ['default', 'filesystem'] as const) {
				await setBinaryDataMode(mode);
				const { error } = await runNode({
					node,
					parameters: upload({ source: 'binary' }),
					items: [await binaryItem(`\uFEFF${ENCODED}`, 'soap-body.xml', 'application/xml')],
					credentials: credentials(),
				});

				expect(error?.message).toContain('The XML document of item 0 is XML-encoded as a whole');
				expect(emulator.stats().requests).toEqual({});
			}
		});

		it('refuses a Build From Items field that holds an encoded document, naming the item and field', async () => {
			const { error } = await runNode({
				node,
				parameters: upload({ source: 'items', rootElement: 'Products', itemElement: 'Product' }),
				items: [{ json: { sku: 'A-1' } }, { json: { sku: 'A-2', legacy: { payload: ENCODED } } }],
				credentials: credentials(),
			});

			expect(error?.message).toBe(
				'Item 1 cannot become XML: the field \'legacy.payload\' holds an XML-encoded document (it starts with "&lt;?xml")',
			);
			expect(error?.description).toContain('choose XML Source: Text');
			expect(emulator.stats().requests).toEqual({});
		});

		it('uploads documents and fields that merely hold escaped text, as they are', async () => {
			const text = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(ESCAPED_TEXT),
				credentials: credentials(),
			});
			expect(text.error).toBeUndefined();
			expect((await uploadedFile(text.output[0][0].json.sessionId as string)).text).toBe(
				ESCAPED_TEXT,
			);

			const built = await runNode({
				node,
				parameters: upload({ source: 'items', rootElement: 'Products', itemElement: 'Product' }),
				items: [
					{
						json: {
							sku: 'A-1',
							description: '&lt;p&gt;Oak&lt;/p&gt;',
							note: 'see &lt;?xml in the manual',
						},
					},
				],
				credentials: credentials(),
			});
			expect(built.error).toBeUndefined();
			expect(emulator.stats().uploads).toBe(2);
		});

		it('reports a document that starts with other text as not well-formed, not as encoded', async () => {
			const { error } = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems('&lt; 5 products'),
				credentials: credentials(),
			});

			expect(error?.message).toContain('is not well-formed');
		});
	});

	describe('continue on fail', () => {
		it('turns failed items into error items and uploads the others', async () => {
			const { output, error } = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD, BROKEN, GOOD.replace('A-1', 'C-3')),
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0]).toHaveLength(3);
			expect(output[0].map(({ pairedItem }) => pairedItem)).toEqual([
				{ item: 0 },
				{ item: 1 },
				{ item: 2 },
			]);
			expect(output[0][0].json.sessionId).toMatch(GUID);
			expect(output[0][1].json.error).toContain('The XML document of item 1 is not well-formed');
			expect(output[0][1].json).not.toHaveProperty('sessionId');
			expect(output[0][2].json.sessionId).toMatch(GUID);
			expect(emulator.stats().uploads).toBe(2);
		});

		it('keeps the session IDs of uploads that happened when the service refuses a later one', async () => {
			const { output, error } = await runNode({
				node,
				parameters: upload({ ...TEXT_SOURCE, options: { validate: false } }),
				items: textItems(GOOD, BROKEN),
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0][0].json.sessionId).toBe(emulator.uploads()[0].id);
			expect(output[0][1]).toEqual({
				json: expect.objectContaining({ error: emulatorInvalidMessage }),
				pairedItem: { item: 1 },
			});
		});
	});

	describe('nothing is lost', () => {
		it('lists the sessions already uploaded when a later item stops the node', async () => {
			const { error } = await runNode({
				node,
				parameters: upload({ ...TEXT_SOURCE, options: { validate: false } }),
				items: textItems(GOOD, GOOD.replace('A-1', 'B-2'), BROKEN),
				credentials: credentials(),
			});

			const [first, second] = emulator.uploads();
			expect(error?.message).toBe(emulatorInvalidMessage);
			expect(error?.description).toContain(
				`Already uploaded in this run (input item -> session ID): item 0 -> ${first.id}; item 1 -> ${second.id}`,
			);
		});

		it('hands back the same session when the node runs again within the execution', async () => {
			const executionId = randomUUID();
			const run = async () =>
				await runNode({
					node,
					parameters: upload(TEXT_SOURCE),
					items: textItems(GOOD),
					credentials: credentials(),
					executionId,
				});

			const first = await run();
			const second = await run();

			expect(emulator.stats().uploads).toBe(1);
			expect(first.output[0][0].json).not.toHaveProperty('reused');
			expect(second.output[0][0].json).toMatchObject({
				sessionId: first.output[0][0].json.sessionId,
				uploadedAt: first.output[0][0].json.uploadedAt,
				reused: true,
			});

			const other = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD),
				credentials: credentials(),
			});
			expect(other.output[0][0].json.sessionId).not.toBe(first.output[0][0].json.sessionId);
			expect(emulator.stats().uploads).toBe(2);
		});

		it('does not upload twice when n8n retries the node after a failure', async () => {
			const { error, run } = await runNode({
				node,
				parameters: upload({ ...TEXT_SOURCE, options: { validate: false } }),
				items: textItems(GOOD, BROKEN),
				credentials: credentials(),
				retryOnFail: { maxTries: 3 },
			});

			expect(error?.message).toBe(emulatorInvalidMessage);
			// Three tries of the node; the good document reached the service once.
			expect(emulator.stats().requests['PUT /api/xml']).toBe(4);
			expect(emulator.stats().uploads).toBe(1);
			expect(error?.description).toContain(`item 0 -> ${emulator.uploads()[0].id}`);
			expect(run.data.resultData.runData['Node Under Test']).toHaveLength(1);
		});

		function fault(rule: IDataObject): Promise<void> {
			return postControl(emulator.url, 'faults', { path: '/api/xml', ...rule });
		}

		/** Uploads the documents as text with n8n's Retry On Fail (two tries). */
		function uploadWithRetryOnFail(...documents: string[]) {
			return runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(...documents),
				credentials: credentials(),
				retryOnFail: { maxTries: 2 },
			});
		}

		it('Retry On Fail after a lost answer: adopts the session that arrived instead of uploading again', async () => {
			await fault({ count: 1, kind: 'reset' });
			const triedFrom = Date.now();
			const { output, error } = await uploadWithRetryOnFail(GOOD, GOOD.replace('A-1', 'B-2'));
			// The list of each service day (UTC) the try could have arrived on, give or take the clocks' 2 minutes: two near midnight.
			const clockSkewMs = 2 * 60_000;
			const daysLooked = new Set(
				[triedFrom - clockSkewMs, Date.now() + clockSkewMs].map((instant) =>
					new Date(instant).toISOString().slice(0, 10),
				),
			);

			expect(error).toBeUndefined();
			const [first, second] = emulator.uploads();
			expect(emulator.stats().uploads).toBe(2);
			expect(output[0].map((item) => item.json)).toEqual([
				expect.objectContaining({
					sessionId: first.id,
					reused: true,
					uploadedAt: first.receivedAt,
				}),
				expect.objectContaining({ sessionId: second.id }),
			]);
			expect(emulator.stats().requests['GET /api/xml/{date}']).toBe(daysLooked.size);
		});

		it('Retry On Fail after a lost answer: sends again when the list shows it did not arrive', async () => {
			// A 500 before anything was stored: ambiguous for the node, absent from the list.
			await fault({ count: 1, kind: '500' });
			const { output, error } = await uploadWithRetryOnFail(GOOD);

			expect(error).toBeUndefined();
			expect(emulator.stats().uploads).toBe(1);
			expect(output[0][0].json).toMatchObject({ sessionId: emulator.uploads()[0].id });
			expect(output[0][0].json).not.toHaveProperty('reused');
		});

		it('Retry On Fail after a lost answer: an upload of the same length made minutes before the try is not taken for it', async () => {
			// An earlier sync of the same catalogue, five minutes ago.
			emulator.clock.set(Date.now() - 5 * 60_000);
			const earlier = await putXml(emulator, GOOD);
			expect(earlier.status).toBe(202);
			emulator.clock.real();
			await fault({ count: 1, kind: '500' });

			const { output, error } = await uploadWithRetryOnFail(GOOD);

			expect(error).toBeUndefined();
			expect(emulator.stats().uploads).toBe(2);
			expect(output[0][0].json).toMatchObject({ sessionId: emulator.uploads()[1].id });
			expect(output[0][0].json).not.toHaveProperty('reused');
		});

		it('Retry On Fail after a lost answer: fails again when the list cannot tell', async () => {
			// Another client uploads a document of the same length meanwhile.
			const executionId = randomUUID();
			await fault({ count: 1, kind: 'reset' });
			const first = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD),
				credentials: credentials(),
				executionId,
			});
			expect(first.error?.message).toBe(
				'The connection broke during PUT /api/xml: the service may or may not have received it',
			);
			const other = await putXml(emulator, GOOD.replace('A-1', 'C-3'));
			expect(other.status).toBe(202);

			const again = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD),
				credentials: credentials(),
				executionId,
			});
			expect(again.error?.message).toBe(
				'The document of item 0 may or may not have reached the service on an earlier try, and the list of uploads cannot tell',
			);
			expect(again.error?.description).toMatch(/^2 uploads of the same length/);
			expect(emulator.stats().uploads).toBe(2);
		});

		it('uploads again when the document of an item changed between runs', async () => {
			const executionId = randomUUID();
			await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD),
				credentials: credentials(),
				executionId,
			});
			const { output } = await runNode({
				node,
				parameters: upload(TEXT_SOURCE),
				items: textItems(GOOD.replace('A-1', 'Z-9')),
				credentials: credentials(),
				executionId,
			});

			expect(output[0][0].json).not.toHaveProperty('reused');
			expect(emulator.stats().uploads).toBe(2);
		});
	});

	describe('Build From Items', () => {
		const products = [
			{ sku: 'A-1', name: 'Chair & table', '@id': '1', price: 10 },
			{ sku: 'A-2', name: 'Lamp', tags: ['new', 'sale'] },
			{ sku: 'A-3', name: 'Desk', size: { width: 120, depth: 60 } },
			{ sku: 'A-4', name: 'Shelf' },
			{ sku: 'A-5', name: 'Rug' },
		];
		const build = (extra: IDataObject = {}) =>
			upload({ source: 'items', rootElement: 'Products', itemElement: 'Product', ...extra });

		it('builds one document from all items and pairs it with every item', async () => {
			const { output, error } = await runNode({
				node,
				parameters: build(),
				items: products.map((json) => ({ json })),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0]).toHaveLength(1);
			expect(output[0][0].pairedItem).toEqual(products.map((_, item) => ({ item })));
			expect(emulator.stats().uploads).toBe(1);
			const { text } = await uploadedFile(output[0][0].json.sessionId as string);
			expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<Products>')).toBe(true);
			expect(text).toContain('<Product id="1">');
			expect(text).toContain('<name>Chair &amp; table</name>');
			expect(text).toContain('<tags>new</tags>');
			expect(text).toContain('<tags>sale</tags>');
			expect(text).toContain('<width>120</width>');
			expect(text.match(/<Product[ >]/g)).toHaveLength(5);
		});

		it('sends one document per group of N items', async () => {
			const { output, error } = await runNode({
				node,
				parameters: build({ itemsPerDocument: 2, xmlDeclaration: false }),
				items: products.map((json) => ({ json })),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0].map(({ pairedItem }) => pairedItem)).toEqual([
				[{ item: 0 }, { item: 1 }],
				[{ item: 2 }, { item: 3 }],
				{ item: 4 },
			]);
			expect(emulator.stats().uploads).toBe(3);
			const { text } = await uploadedFile(output[0][2].json.sessionId as string);
			expect(text.startsWith('<Products>')).toBe(true);
			expect(text).toContain('<sku>A-5</sku>');
			expect(text).not.toContain('A-4');
		});

		it('names the item and field that cannot become XML, before any request', async () => {
			const { error } = await runNode({
				node,
				parameters: build({ itemsPerDocument: 2 }),
				items: [
					{ json: { sku: 'A' } },
					{ json: { sku: 'B' } },
					{ json: { sku: 'C', 'bad name': 1 } },
				],
				credentials: credentials(),
			});

			expect(error?.message).toBe(
				"Item 2 cannot become XML: The field name 'bad name' is not a valid XML element name",
			);
			expect(error?.description).toContain('Rename or remove the field "bad name"');
			expect(emulator.stats().requests).toEqual({});
		});

		it('refuses an element name that is no XML name', async () => {
			const { error } = await runNode({
				node,
				parameters: build({ rootElement: 'My Products' }),
				items: [{ json: { sku: 'A' } }],
				credentials: credentials(),
			});

			expect(error?.message).toBe(
				'Root Element "My Products" of item 0 is not a valid XML element name',
			);
			expect(emulator.stats().requests).toEqual({});
		});

		it('refuses a root element with a namespace prefix, and an item element whose prefix the item does not declare', async () => {
			const root = await runNode({
				node,
				parameters: build({ rootElement: 'g:Products' }),
				items: [{ json: { sku: 'A' } }],
				credentials: credentials(),
			});
			const item = await runNode({
				node,
				parameters: build({ itemElement: 'g:Product' }),
				items: [{ json: { sku: 'A' } }],
				credentials: credentials(),
			});

			expect(root.error?.message).toBe(
				'Root Element "g:Products" of item 0 has a namespace prefix that nothing declares',
			);
			expect(item.error?.message).toBe(
				"Item 0 cannot become XML: The element 'g:Product' uses the namespace prefix 'g', which no '@xmlns:g' field declares on it or above it",
			);
			expect(emulator.stats().requests).toEqual({});
		});

		it('fails only the group of a bad item under continue on fail', async () => {
			const { output } = await runNode({
				node,
				parameters: build({ itemsPerDocument: 2 }),
				items: [{ json: { sku: 'A' } }, { json: { sku: 'B\u0001' } }, { json: { sku: 'C' } }],
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(output[0]).toHaveLength(2);
			expect(output[0][0]).toEqual({
				json: expect.objectContaining({
					error: expect.stringContaining(
						"Item 1 cannot become XML: The field 'sku' holds the character U+0001",
					),
				}),
				pairedItem: [{ item: 0 }, { item: 1 }],
			});
			expect(output[0][1].json.sessionId).toMatch(GUID);
			expect(emulator.stats().uploads).toBe(1);
		});
	});

	describe('Wait for Completion', () => {
		it('waits for all uploads together and outputs their status', async () => {
			const { output, error } = await runNode({
				node,
				parameters: upload({
					...TEXT_SOURCE,
					options: { waitForCompletion: true, includeErrorMessage: true },
				}),
				items: textItems(GOOD, FAILING),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			const [succeeded, failed] = output[0].map(({ json }) => json);
			expect(succeeded).toMatchObject({ status: 'succeeded' });
			expect(succeeded).not.toHaveProperty('errorUrl');
			expect(failed).toMatchObject({
				status: 'failed',
				errorUrl: `${emulator.url}/api/status/${String(failed.sessionId)}/errors`,
			});
			expect(failed.errorMessage).toMatch(
				/^Processing of the document ended with \d+ error\(s\)\.$/,
			);
			expect(failed.errorDocument).toMatchObject({ id: failed.sessionId });
			expect(JSON.parse(failed.errorText as string)).toEqual(failed.errorDocument);
			expect(emulator.stats().requests['GET /api/status/{id}/result']).toBe(2);
		});

		it('reports sessions still in the queue at the timeout as processing', async () => {
			const slow = '<Products><!--emulator:processing-ms=600000--><Product/></Products>';
			const { output, error } = await runNode({
				node,
				parameters: upload({ ...TEXT_SOURCE, options: { waitForCompletion: true, timeout: 0 } }),
				items: textItems(slow, GOOD),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0].map(({ json }) => [json.status, json.timedOut])).toEqual([
				['processing', true],
				['succeeded', undefined],
			]);
		});

		it('fails the item of a failed document when asked, keeping its session', async () => {
			const { output, error } = await runNode({
				node,
				parameters: upload({
					...TEXT_SOURCE,
					options: { waitForCompletion: true, failOnProcessingError: true },
				}),
				items: textItems(GOOD, FAILING),
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0][0].json.status).toBe('succeeded');
			expect(output[0][1]).toEqual({
				json: expect.objectContaining({
					sessionId: emulator.uploads()[1].id,
					status: 'failed',
					error: `Processing of the document of item 1 ended with errors (session ${emulator.uploads()[1].id})`,
				}),
				pairedItem: { item: 1 },
			});
		});

		it('refuses a timeout that is no number before anything is uploaded', async () => {
			const { error } = await runNode({
				node,
				parameters: upload({
					...TEXT_SOURCE,
					options: { waitForCompletion: true, timeout: '={{ $json.wait }}' },
				}),
				items: [{ json: { xml: GOOD, wait: 30 } }, { json: { xml: GOOD, wait: 'later' } }],
				credentials: credentials(),
			});

			expect(error?.message).toBe(
				'The Timeout (Seconds) of item 1 is not a number of seconds: "later"',
			);
			expect(putRequests()).toBe(0);
		});

		it('stops on a failed document without continue on fail, listing every session', async () => {
			const { error } = await runNode({
				node,
				parameters: upload({
					...TEXT_SOURCE,
					options: { waitForCompletion: true, failOnProcessingError: true },
				}),
				items: textItems(FAILING, GOOD),
				credentials: credentials(),
			});

			const [failed, succeeded] = emulator.uploads();
			expect(error?.message).toBe(
				`Processing of the document of item 0 ended with errors (session ${failed.id})`,
			);
			expect(error?.description).toContain(`item 0 -> ${failed.id}; item 1 -> ${succeeded.id}`);
		});
	});
});

const emulatorInvalidMessage = 'The request is invalid.';

describe('Document: stored files', () => {
	it('stops reading a stored file when the execution is cancelled', async () => {
		const abort = new AbortController();
		const chunk = Buffer.from(`<Product>${'x'.repeat(4000)}</Product>`);
		let chunksRead = 0;
		// 400 MB if read to the end: the check would take many seconds.
		const file = new Readable({
			read() {
				chunksRead++;
				if (chunksRead === 2) abort.abort();
				this.push(
					chunksRead === 1 ? Buffer.from('<Products>') : chunksRead > 100_000 ? null : chunk,
				);
			},
		});
		const context = createContext({
			credentials: {},
			nodeParameters: { source: 'binary', binaryPropertyName: 'data', options: {} },
			items: [
				{
					json: {},
					binary: { data: { id: 'filesystem-v2:stored', data: '', mimeType: 'application/xml' } },
				},
			],
			signal: abort.signal,
		});
		context.helpers.getBinaryStream = async () => file;

		const [prepared] = await prepareDocuments(context, context.getInputData());

		expect(prepared.error?.message).toBe('The execution was cancelled');
		expect(chunksRead).toBeLessThan(100);
		expect(file.destroyed).toBe(true);
	});

	it('closes the file stream of an attempt the service refused without reading it', async () => {
		let requests = 0;
		const server = await listenLocal((req, res) => {
			requests++;
			if (requests === 1) {
				// Refused before the body was read, and the connection dropped, as a front end may do.
				res.writeHead(429, { 'Retry-After': '0', Connection: 'close' });
				res.end('{"message":"The bucket is full"}');
				req.socket.destroy();
				return;
			}
			req.resume();
			req.on('end', () => {
				res.writeHead(202, { 'Content-Type': 'text/plain' });
				res.end('3f2504e0-4f89-41d3-9a0c-0305e82c3301');
			});
		});
		const opened: Readable[] = [];
		const context = createContext({
			credentials: fastCredentials(server),
			nodeParameters: {
				source: 'binary',
				binaryPropertyName: 'data',
				options: { validate: false },
			},
			items: [
				{
					json: {},
					binary: {
						data: {
							id: 'filesystem-v2:stored',
							data: '',
							mimeType: 'application/xml',
							fileName: 'a.xml',
						},
					},
				},
			],
		});
		// 8 MB: more than the connection takes before the service answers.
		context.helpers.getBinaryStream = async () => {
			let chunks = 0;
			const file = new Readable({
				read() {
					chunks++;
					this.push(chunks > 128 ? null : Buffer.alloc(64 * 1024, 'a'));
				},
			});
			opened.push(file);
			return file;
		};

		try {
			const output = await uploadDocuments(
				context,
				context.getInputData(),
				new ItemFailures(context),
				'xml',
			);
			expect(output[0].json.sessionId).toBe('3f2504e0-4f89-41d3-9a0c-0305e82c3301');
		} finally {
			await server.close();
		}
		// One read to hash the file, one per attempt.
		expect(requests).toBe(2);
		expect(opened.map((file) => file.destroyed)).toEqual([true, true, true]);
	});
});

describe('Document: Upload with Wait for Completion, a session the service forgets', () => {
	const KNOWN = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
	const FORGOTTEN = '3f2504e0-4f89-41d3-9a0c-0305e82c3302';

	it('keeps every session ID and fails only the forgotten one, under continue on fail', async () => {
		let uploads = 0;
		const server = await listenLocal((req, res) => {
			req.resume();
			req.on('end', () => {
				if (req.method === 'PUT') {
					res.writeHead(202, { 'Content-Type': 'text/plain' });
					res.end(uploads++ === 0 ? KNOWN : FORGOTTEN);
				} else if (req.url === `/api/status/${KNOWN}/result`) {
					res.writeHead(200).end();
				} else {
					res.writeHead(404).end();
				}
			});
		});
		try {
			const { output, error } = await runNode({
				node,
				parameters: upload({ ...TEXT_SOURCE, options: { waitForCompletion: true } }),
				items: textItems(GOOD, GOOD.replace('A-1', 'A-2')),
				credentials: fastCredentials(server),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{
					json: expect.objectContaining({ sessionId: KNOWN, status: 'succeeded' }),
					pairedItem: { item: 0 },
				},
				{
					json: expect.objectContaining({
						sessionId: FORGOTTEN,
						waitError: expect.stringContaining('Not found'),
					}),
					pairedItem: { item: 1 },
				},
			]);
			expect(output[0][1].json.status).toBeUndefined();
		} finally {
			await server.close();
		}
	});
});

describe('Document: Retry On Fail after a lost answer, a listed upload whose id is no session ID', () => {
	it.each(['../../auth/me', 'a/b?c=d', ''])(
		'does not take %j for the session: the item fails, nothing is sent again',
		async (listedId) => {
			let puts = 0;
			let bytes = 0;
			const server = await listenLocal((req, res) => {
				let size = 0;
				req.on('data', (chunk: Buffer) => (size += chunk.length));
				req.on('end', () => {
					if (req.method === 'PUT') {
						puts++;
						bytes = size;
						// Stored, but the answer is lost.
						res.destroy();
						return;
					}
					res.writeHead(200, { 'Content-Type': 'application/json' });
					res.end(
						JSON.stringify([
							{ id: listedId, fileLenght: bytes, receivedAt: new Date().toISOString() },
						]),
					);
				});
			});
			try {
				const { output, error } = await runNode({
					node,
					parameters: upload(TEXT_SOURCE),
					items: textItems(GOOD),
					credentials: fastCredentials(server),
					retryOnFail: { maxTries: 2 },
				});

				expect(output).toEqual([]);
				expect(error?.message).toBe(
					'The document of item 0 may or may not have reached the service on an earlier try, and the list of uploads cannot tell',
				);
				expect(error?.description).toMatch(/is not a session ID/);
				expect(puts).toBe(1);
			} finally {
				await server.close();
			}
		},
	);
});

describe('Document: Fail On Processing Error with a long error message', () => {
	it("puts the error document's message into the error short and on one line", async () => {
		const SESSION = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
		const reason = `${'e'.repeat(5000)}\n2026-01-01T00:00:00.000Z | error | Forged entry`;
		const server = await listenLocal((req, res) => {
			req.resume();
			req.on('end', () => {
				if (req.method === 'PUT') res.writeHead(202, { 'Content-Type': 'text/plain' }).end(SESSION);
				else if (req.url === `/api/status/${SESSION}/result`)
					res.writeHead(301, { Location: `/api/status/${SESSION}/errors` }).end();
				else
					res
						.writeHead(200, { 'Content-Type': 'application/json' })
						.end(JSON.stringify({ message: reason }));
			});
		});
		try {
			const { error } = await runNode({
				node,
				parameters: upload({
					...TEXT_SOURCE,
					options: {
						waitForCompletion: true,
						failOnProcessingError: true,
						includeErrorMessage: true,
					},
				}),
				items: textItems(GOOD),
				credentials: fastCredentials(server),
			});

			expect(error?.message).toBe(
				`Processing of the document of item 0 ended with errors (session ${SESSION})`,
			);
			const [said] = String(error?.description).split('\n\n');
			expect(said).toBe(`${'e'.repeat(299)}…`);
		} finally {
			await server.close();
		}
	});
});
