/**
 * The workflows in examples/ as a user imports them, run against the emulator. The trigger example
 * (failed-upload-alert.json) is run by trigger.test.ts.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { call } from '../../scripts/emulator/client';
import { photoBytes, startShop } from '../../scripts/shop';
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
	test('nightly sync: pages the shop, uploads the photos batch by batch, sends the products with their hashcodes and holds back the one whose photo is gone', async () => {
		const shop = await startShop({ products: 5, pageSize: 2, missingPhotos: ['P00003-2'] });
		try {
			const example = readExample('nightly-sync.json');
			const nodes = (
				example.nodes as Array<ExampleNode & { parameters: Record<string, unknown> }>
			).map((node) =>
				node.name === 'Get Products'
					? { ...node, parameters: { ...node.parameters, url: shop.productsUrl } }
					: // Batches of 2 products, so that the loop goes round three times.
						node.name === '500 Products at a Time'
						? { ...node, parameters: { ...node.parameters, batchSize: 2 } }
						: node,
			);
			const run = await n8n.run({ ...example, id: undefined, nodes });

			expect(nodeItems(run, 'Alert: Photos Not Uploaded')).toEqual([
				{
					alert: expect.stringMatching(
						/^Product P00003 not sent tonight, a photo failed: http:\/\/127\.0\.0\.1:\d+\/photos\/P00003-2\.jpg: /,
					),
				},
			]);
			const [upload] = nodeItems(run, 'Upload Catalogue and Wait');
			expect(upload).toMatchObject({ status: 'succeeded', validation: 'passed' });
			expect(nodeItems(run, 'Catalogue Accepted')).toHaveLength(1);
			expect(run.data.resultData.runData['Alert: Needs Attention']).toBeUndefined();

			expect(shop.stats().requests).toEqual({
				'GET /api/products': 3,
				'GET /photos/{photo}': 10,
			});
			const { requests } = n8n.emulator.stats();
			// One image request per batch: the photos of its products in one upload.
			expect(requests['POST /api/images']).toBe(3);
			expect(n8n.emulator.stats().images).toBe(9);

			const hashcodeOf = new Map(n8n.emulator.images().map((image) => [image.md5, image.hashcode]));
			const hashcode = (id: string) =>
				hashcodeOf.get(
					createHash('md5')
						.update(photoBytes(id, 1, 20_000))
						.digest('hex'),
				);
			const file = await call(n8n.emulator, 'GET', `/api/files/${String(upload.sessionId)}`);
			const products = [...file.text.matchAll(/<Product>([\s\S]*?)<\/Product>/g)].map(
				([, product]) => ({
					id: /<Id>(.*?)<\/Id>/.exec(product)?.[1],
					hashcodes: [...product.matchAll(/<ImageHashcode>(.*?)<\/ImageHashcode>/g)].map(
						([, found]) => found,
					),
				}),
			);
			expect(products).toEqual(
				['P00001', 'P00002', 'P00004', 'P00005'].map((id) => ({
					id,
					hashcodes: [hashcode(`${id}-1`), hashcode(`${id}-2`)],
				})),
			);
		} finally {
			await shop.close();
		}
	});
});
