/**
 * The workflows in examples/ as a user imports them, run against the emulator. The trigger example
 * (failed-upload-alert.json) is run by trigger.test.ts.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { call } from '../../scripts/emulator/client';
import { photoBytes, startShop } from '../../scripts/shop';
import { postControl } from '../helpers/service';
import {
	EMULATOR_CREDENTIAL,
	nodeItems,
	nodeType,
	prepareN8n,
	PROJECT_ROOT,
	type N8nHarness,
	type WorkflowDefinition,
} from './harness';

const EXAMPLES = join(PROJECT_ROOT, 'examples');
const HASHCODE = /^[0-9a-f]{32}$/;

interface ExampleNode {
	name: string;
	type: string;
	credentials?: Record<string, { id: string; name: string }>;
}

type Example = WorkflowDefinition & { id: string };

function readExample(file: string): Example {
	return JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as Example;
}

describe('the example workflows', () => {
	let n8n: N8nHarness;
	const files = readdirSync(EXAMPLES).filter((file) => file.endsWith('.json'));

	beforeAll(async () => {
		// Processing takes a moment, so that the catalogue example really waits for it.
		n8n = await prepareN8n({ emulator: { processingMs: 1000 } });
		// As the editor's "Import from File" does: created through the REST API, keeping their ids.
		for (const file of files) await n8n.importWorkflow(readExample(file));
	});

	afterAll(async () => {
		await n8n?.stop();
	});

	beforeEach(() => {
		n8n.emulator.reset();
	});

	test('all are in n8n with their ids and use the package’s nodes with the emulator credential', async () => {
		expect(files).toEqual(
			expect.arrayContaining([
				'catalogue-sync.json',
				'failed-upload-alert.json',
				'image-upload-skip-existing.json',
				'image-upload-known-in-data-table.json',
				'nightly-sync.json',
			]),
		);
		for (const file of files) {
			const example = readExample(file);
			const ours = (example.nodes as ExampleNode[]).filter((node) =>
				node.type.startsWith(nodeType('')),
			);
			expect(ours.length).toBeGreaterThan(0);
			for (const node of ours) {
				expect(node.credentials).toEqual({ productDataIntegrationApi: { ...EMULATOR_CREDENTIAL } });
			}
		}
		const { data: listed } = await n8n.server.request<{ data: Array<{ id: string }> }>(
			'GET',
			'/rest/workflows',
		);
		expect(listed.map((workflow) => workflow.id)).toEqual(
			expect.arrayContaining(files.map((file) => readExample(file).id)),
		);
	});

	test('catalogue sync: builds one document from the products, uploads it once and ends in Catalogue Accepted', async () => {
		const run = await n8n.executeWorkflow(readExample('catalogue-sync.json').id);

		const [upload] = nodeItems(run, 'Upload Catalogue and Wait');
		expect(upload).toMatchObject({
			status: 'succeeded',
			endpoint: 'xml',
			customerId: '1001',
			validation: 'passed',
		});
		expect(nodeItems(run, 'Upload Catalogue and Wait')).toHaveLength(1);
		expect(nodeItems(run, 'Catalogue Accepted')).toEqual([
			{
				summary: `Catalogue accepted: session ${String(upload.sessionId)} (${String(upload.bytes)} bytes)`,
			},
		]);
		expect(run.data.resultData.runData['Alert: Needs Attention']).toBeUndefined();

		expect(n8n.emulator.stats().uploads).toBe(1);
		const [received] = n8n.emulator.uploads();
		expect(received).toMatchObject({
			id: upload.sessionId,
			state: 'succeeded',
			byteLength: upload.bytes,
			imageUris: 3,
		});
		const file = await call(n8n.emulator, 'GET', `/api/files/${String(upload.sessionId)}`);
		expect(file.text.match(/<Product>/g)).toHaveLength(3);
		expect(file.text).toContain('<Id>SKU-1002</Id>');
		expect(file.text).toContain('<ImageUrl>https://images.example.com/sku-1003.jpg</ImageUrl>');
	});

	test('image upload: the first run uploads the photos in one request, the second skips them with the same hashcodes and no request', async () => {
		const { id } = readExample('image-upload-skip-existing.json');

		const first = await n8n.executeWorkflow(id);
		const uploaded = nodeItems(first, 'Hashcode per Product');
		expect(uploaded).toEqual([
			{ sku: 'SKU-1001', imageHashcode: expect.stringMatching(HASHCODE), alreadyThere: false },
			{ sku: 'SKU-1002', imageHashcode: expect.stringMatching(HASHCODE), alreadyThere: false },
		]);
		expect(uploaded[0].imageHashcode).not.toBe(uploaded[1].imageHashcode);
		expect(
			n8n.emulator
				.images()
				.map((image) => image.hashcode)
				.sort(),
		).toEqual(uploaded.map((item) => item.imageHashcode).sort());

		const { requests } = n8n.emulator.stats();
		// One look-up per photo (Skip Existing), then both photos in one upload.
		expect([requests['GET /api/images'], requests['POST /api/images']]).toEqual([2, 1]);

		const second = await n8n.executeWorkflow(id);
		expect(nodeItems(second, 'Hashcode per Product')).toEqual(
			uploaded.map((item) => ({ ...item, alreadyThere: true })),
		);
		// The photos are known images now: no request at all.
		expect(n8n.emulator.stats().requests).toEqual(requests);
	});

	test('known images in a Data Table: the first run uploads the photos and stores md5 and hashcode, the next one sends nothing, its hashcodes coming from the table', async () => {
		const { data: project } = await n8n.server.request<{ data: { id: string } }>(
			'GET',
			'/rest/projects/personal',
		);
		await n8n.server.request('POST', `/rest/projects/${project.id}/data-tables`, {
			name: 'Known Product Photos',
			columns: ['sku', 'md5', 'hashcode'].map((name) => ({ name, type: 'string' })),
		});
		const { id } = readExample('image-upload-known-in-data-table.json');

		const first = await n8n.executeWorkflow(id);
		const uploaded = nodeItems(first, 'Hashcode per Product');
		expect(uploaded).toEqual([
			{
				sku: 'SKU-2001',
				md5: expect.any(String),
				hashcode: expect.stringMatching(HASHCODE),
				knownBefore: false,
			},
			{
				sku: 'SKU-2002',
				md5: expect.any(String),
				hashcode: expect.stringMatching(HASHCODE),
				knownBefore: false,
			},
		]);
		expect(n8n.emulator.stats().requests['POST /api/images']).toBe(1);
		expect(nodeItems(first, 'Remember Photos')).toHaveLength(2);

		n8n.emulator.reset();
		const second = await n8n.executeWorkflow(id);
		expect(nodeItems(second, 'Hashcode per Product')).toEqual(
			uploaded.map((item) => ({ ...item, knownBefore: true })),
		);
		// The hashcodes came with the items from the table: no request at all.
		expect(n8n.emulator.stats().requests).toEqual({});
	});
	test('nightly sync: takes the photos by URL and remembers them in its data table, sends only changed products; a second run downloads and sends nothing, a changed photo costs one download, one image request and its product; a session that ends with errors is alerted', async () => {
		const shop = await startShop({ products: 5, pageSize: 2, missingPhotos: ['P00003-2'] });
		try {
			const example = readExample('nightly-sync.json');
			const exampleNodes = example.nodes as Array<
				ExampleNode & { parameters: Record<string, unknown> }
			>;
			// n8n evaluates an If or Set node once per item: the example routes its thousands of products
			// and photos with Code nodes that run once for all items.
			expect(
				exampleNodes.filter((node) =>
					['n8n-nodes-base.if', 'n8n-nodes-base.set'].includes(node.type),
				),
			).toEqual([]);
			const knownPhotos = exampleNodes.find((node) => node.name === 'Known Photos');
			const { value: table } = knownPhotos?.parameters.dataTableId as { value: string };
			const { data: project } = await n8n.server.request<{ data: { id: string } }>(
				'GET',
				'/rest/projects/personal',
			);
			await n8n.server.request('POST', `/rest/projects/${project.id}/data-tables`, {
				name: table,
				columns: ['url', 'version', 'md5', 'hashcode'].map((name) => ({ name, type: 'string' })),
			});
			const shopHost = new URL(shop.url).host;
			const nodes = exampleNodes.map((node) =>
				node.name === 'Get Products'
					? { ...node, parameters: { ...node.parameters, url: shop.productsUrl } }
					: node.name === 'Upload Photo'
						? {
								...node,
								parameters: {
									...node.parameters,
									options: {
										...(node.parameters.options as object),
										allowedInternalHosts: shopHost,
									},
								},
							}
						: node,
			);
			// One workflow for all runs: what Only Changed Products remembers is the workflow's node's.
			const id = await n8n.importWorkflow({ ...example, id: undefined, nodes });
			const photoAlert = {
				alert: expect.stringMatching(
					/^Product P00003 not sent tonight, a photo failed: http:\/\/127\.0\.0\.1:\d+\/photos\/P00003-2\.jpg: /,
				),
			};
			const hashcodeOf = () =>
				new Map(n8n.emulator.images().map((image) => [image.md5, image.hashcode]));
			const hashcode = (photo: string, version = 1) =>
				hashcodeOf().get(
					createHash('md5')
						.update(photoBytes(photo, version, 20_000))
						.digest('hex'),
				);
			const productsIn = async (sessionId: unknown) => {
				const file = await call(n8n.emulator, 'GET', `/api/files/${String(sessionId)}`);
				return [...file.text.matchAll(/<Product>([\s\S]*?)<\/Product>/g)].map(([, product]) => ({
					id: /<Id>(.*?)<\/Id>/.exec(product)?.[1],
					hashcodes: [...product.matchAll(/<ImageHashcode>(.*?)<\/ImageHashcode>/g)].map(
						([, found]) => found,
					),
				}));
			};

			const first = await n8n.executeWorkflow(id);
			expect(nodeItems(first, 'Alert: Photos Not Uploaded')).toEqual([photoAlert]);
			const [firstUpload] = nodeItems(first, 'Upload Changed Products');
			expect(firstUpload).toMatchObject({
				product: 'P00001',
				sent: true,
				reason: 'changed',
				status: 'succeeded',
				confirmed: true,
				run: { products: 4, sent: 4, unchanged: 0, sessions: 1, sessionsConfirmed: 1 },
			});
			expect(nodeItems(first, 'Catalogue Accepted')).toEqual([
				{ summary: 'Catalogue synced: 4 changed products sent and confirmed, 0 unchanged' },
			]);
			expect(nodeItems(first, 'Alert: Needs Attention')).toEqual([]);
			expect(shop.stats()).toMatchObject({
				requests: { 'GET /api/products': 3, 'GET /photos/{photo}': 10 },
				photosSent: 9,
			});
			// All nine photos in one image request, then the document, and its status until it is done.
			expect(n8n.emulator.stats().requests).toEqual({
				'POST /api/images': 1,
				'PUT /api/xml': 1,
				'GET /api/status/{id}/result': expect.any(Number),
			});
			expect(n8n.emulator.stats().images).toBe(9);
			expect(nodeItems(first, 'Remember New Photos')).toHaveLength(9);
			expect(first.data.resultData.runData['Remember Changed Photos']).toBeUndefined();
			expect(await productsIn(firstUpload.sessionId)).toEqual(
				['P00001', 'P00002', 'P00004', 'P00005'].map((product) => ({
					id: product,
					hashcodes: [hashcode(`${product}-1`), hashcode(`${product}-2`)],
				})),
			);
			const firstPhotos = nodeItems(first, 'Upload Photo');

			// Nothing changed at the shop.
			shop.resetStats();
			const requestsBefore = n8n.emulator.stats().requests;
			const second = await n8n.executeWorkflow(id);
			// Only the photo that is gone is asked for again; no photo is downloaded.
			expect(shop.stats()).toMatchObject({
				requests: { 'GET /api/products': 3, 'GET /photos/{photo}': 1 },
				photosSent: 0,
			});
			expect(n8n.emulator.stats().requests).toEqual(requestsBefore);
			const secondPhotos = nodeItems(second, 'Upload Photo');
			expect(secondPhotos.filter((photo) => photo.known === 'item')).toHaveLength(9);
			expect(secondPhotos.map((photo) => photo.hashcode)).toEqual(
				firstPhotos.map((photo) => photo.hashcode),
			);
			expect(second.data.resultData.runData['New or Changed Photos']).toBeDefined();
			expect(second.data.resultData.runData['Remember New Photos']).toBeUndefined();
			expect(second.data.resultData.runData['Remember Changed Photos']).toBeUndefined();
			// Output Unchanged Products is off: nothing sent, one item with the night's summary.
			expect(nodeItems(second, 'Upload Changed Products')).toEqual([
				{ run: expect.objectContaining({ products: 4, sent: 0, unchanged: 4, sessions: 0 }) },
			]);
			expect(nodeItems(second, 'Catalogue Accepted')).toEqual([
				{
					summary:
						'Nothing to send: the service has confirmed all 4 products as they are now. No request was made.',
				},
			]);
			expect(nodeItems(second, 'Alert: Photos Not Uploaded')).toEqual([photoAlert]);

			// One photo changed at the shop: its download, its upload and its product only.
			expect(shop.changePhotos(1)).toEqual(['P00001-1']);
			shop.resetStats();
			const third = await n8n.executeWorkflow(id);
			expect(shop.stats()).toMatchObject({ photosSent: 1 });
			const { requests } = n8n.emulator.stats();
			expect([requests['POST /api/images'], requests['PUT /api/xml']]).toEqual([
				requestsBefore['POST /api/images'] + 1,
				requestsBefore['PUT /api/xml'] + 1,
			]);
			expect(third.data.resultData.runData['Remember New Photos']).toBeUndefined();
			expect(nodeItems(third, 'Remember Changed Photos')).toEqual([
				expect.objectContaining({
					url: `${shop.url}/photos/P00001-1.jpg`,
					version: '2026-01-02T00:00:00.000Z',
					hashcode: hashcode('P00001-1', 2),
				}),
			]);
			// Only the product sent comes out of Upload Changed Products.
			expect(nodeItems(third, 'Upload Changed Products')).toHaveLength(1);
			const [thirdUpload] = nodeItems(third, 'Upload Changed Products');
			expect(thirdUpload).toMatchObject({
				product: 'P00001',
				sent: true,
				confirmed: true,
				run: { products: 4, sent: 1, unchanged: 3 },
			});
			expect(await productsIn(thirdUpload.sessionId)).toEqual([
				{ id: 'P00001', hashcodes: [hashcode('P00001-1', 2), secondPhotos[1].hashcode] },
			]);

			// The service ends the session of the next changed product with errors: alerted, and the
			// products it did not confirm stay unconfirmed for the next night.
			await postControl(n8n.emulator.url, 'failing', { texts: ['<Id>P00001</Id>'] });
			shop.changePhotos(1);
			const fourth = await n8n.executeWorkflow(id);
			const [fourthUpload] = nodeItems(fourth, 'Upload Changed Products');
			expect(fourthUpload).toMatchObject({
				product: 'P00001',
				sent: true,
				status: 'failed',
				run: { products: 4, sent: 1, unchanged: 3, sessionsFailed: 1 },
			});
			expect(nodeItems(fourth, 'Alert: Needs Attention')).toEqual([
				{
					alert: `Catalogue upload ${String(fourthUpload.sessionId)} is failed: ${String(fourthUpload.errorMessage)}. Its 1 products are sent again next night.`,
				},
			]);
			expect(nodeItems(fourth, 'Alert: Photos Not Uploaded')).toEqual([photoAlert]);
		} finally {
			await shop.close();
		}
	});
});
