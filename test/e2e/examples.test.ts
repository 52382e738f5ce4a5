/**
 * The workflows in examples/ as a user imports them, run against the emulator. The trigger example
 * (failed-upload-alert.json) is run by trigger.test.ts, the delta night by nightlySyncDelta.test.ts
 * and the nightly sync without Redis by nightlySyncWithoutRedis.test.ts.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { call } from '../../scripts/emulator/client';
import { startRedis, type RedisServer } from '../../scripts/redis';
import { photoBytes, startShop } from '../../scripts/shop';
import { postControl } from '../helpers/service';
import {
	EMULATOR_CREDENTIAL,
	nodeItems,
	nodeType,
	prepareN8n,
	runError,
	PROJECT_ROOT,
	dataTablesFilled,
	sharingInRedis,
	type N8nHarness,
	type StoredExecution,
	type WorkflowDefinition,
} from './harness';

const EXAMPLES = join(PROJECT_ROOT, 'examples');
const HASHCODE = /^[0-9a-f]{32}$/;

interface ExampleNode {
	name: string;
	type: string;
	credentials?: Record<string, { id: string; name: string }>;
	/** An Execute Workflow node's: the workflow it runs. */
	parameters?: { workflowId?: { value: string } };
}

type Example = WorkflowDefinition & { id: string };

function readExample(file: string): Example {
	return JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as Example;
}

describe('the example workflows', () => {
	let n8n: N8nHarness;
	let redis: RedisServer;
	const files = readdirSync(EXAMPLES).filter((file) => file.endsWith('.json'));

	beforeAll(async () => {
		// The nightly sync's pages remember their products in the credential's Redis.
		redis = await startRedis();
		// Processing takes a moment, so that the catalogue example really waits for it.
		n8n = await prepareN8n({
			emulator: { processingMs: 1000 },
			credential: sharingInRedis(redis),
		});
		// As the editor's "Import from File" does: created through the REST API, keeping their ids.
		for (const file of files) await n8n.importWorkflow(readExample(file));
	});

	afterAll(async () => {
		await n8n?.stop();
		await redis?.stop();
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
				'nightly-sync-page.json',
				'nightly-sync-delta.json',
				'nightly-sync-without-redis.json',
				'nightly-sync-without-redis-page.json',
			]),
		);
		const oursIn = (example: Example) =>
			(example.nodes as ExampleNode[]).filter((node) => node.type.startsWith(nodeType('')));
		const byId = new Map(files.map(readExample).map((example) => [example.id, example]));
		for (const file of files) {
			const example = readExample(file);
			const ours = oursIn(example);
			// A night without a node of ours runs a page workflow that has them.
			const ranByIt = (example.nodes as ExampleNode[]).flatMap((node) => {
				const ran = byId.get(String(node.parameters?.workflowId?.value));
				return node.type === 'n8n-nodes-base.executeWorkflow' && ran ? oursIn(ran) : [];
			});
			expect([...ours, ...ranByIt].length).toBeGreaterThan(0);
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
		await n8n.server.createDataTable(
			'Known Product Photos',
			['sku', 'md5', 'hashcode'].map((name) => ({ name, type: 'string' })),
		);
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
	test('nightly sync: a page workflow per page of products takes the photos by URL and remembers them in the data table and hands back only its counts and alerts, the changed products of all pages are sent in one document at the end of the night; a second run downloads and sends nothing, a changed photo costs one download, one image request and its product; a session that ends with errors is alerted; a night the shop fails a page stops before any upload and the next one makes up for it; every night is reported in a row of a data table, no page execution is kept', async () => {
		// The third page holds P00005 alone, a product without photos: a page without any photo.
		const shop = await startShop({
			products: 5,
			pageSize: 2,
			missingPhotos: ['P00003-2'],
			productsWithoutPhotos: ['P00005'],
		});
		try {
			const example = readExample('nightly-sync.json');
			const pageExample = readExample('nightly-sync-page.json');
			type Node = ExampleNode & { parameters: Record<string, unknown> };
			const exampleNodes = [...example.nodes, ...pageExample.nodes] as Node[];
			// n8n evaluates an If or Set node once per item: the example routes its thousands of products
			// and photos with Code nodes that run once for all items.
			expect(
				exampleNodes.filter((node) =>
					['n8n-nodes-base.if', 'n8n-nodes-base.set'].includes(node.type),
				),
			).toEqual([]);
			// Successful nights are not kept (at catalogue scale each would store tens of MB): each
			// night's record is its row in the reports table.
			expect(example.settings).toMatchObject({ saveDataSuccessExecution: 'none' });
			// The tables as the user creates them, with the columns the example's inserts name.
			const [photosTable, reportsTable] = await Promise.all(
				[...dataTablesFilled(pageExample), ...dataTablesFilled(example)].map(({ name, columns }) =>
					n8n.server.createDataTable(name, columns),
				),
			);
			const rows = async () =>
				(await n8n.server.dataTableRows(photosTable))
					.map(({ productId, url, version, md5, hashcode }) => ({
						productId,
						url,
						version,
						md5,
						hashcode,
					}))
					.sort((a, b) => String(a.url).localeCompare(String(b.url)));
			const shopHost = new URL(shop.url).host;
			const toShop = (node: Node): Node =>
				['First Page', 'Get Page'].includes(node.name)
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
						: node;
			// One workflow for all runs: what Only Changed Products remembers is the workflow's node's.
			const pageId = await n8n.importWorkflow({
				...pageExample,
				id: undefined,
				nodes: (pageExample.nodes as Node[]).map(toShop),
			});
			// The schedule calls the page workflow's published version, so it must be publishable.
			await n8n.server.activateWorkflow(pageId);
			const id = await n8n.importWorkflow({
				...example,
				id: undefined,
				nodes: (example.nodes as Node[]).map(toShop).map((node) =>
					node.name === 'Sync Each Page'
						? {
								...node,
								parameters: {
									...node.parameters,
									workflowId: {
										...(node.parameters.workflowId as object),
										value: pageId,
									},
								},
							}
						: node,
				),
			});
			const photoAlert =
				/^Product P00003 not sent tonight, a photo failed: http:\/\/127\.0\.0\.1:\d+\/photos\/P00003-2\.jpg: [^\n]+$/;
			const report = (fields: Record<string, unknown>) => ({
				at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
				alertCount: 1,
				alerts: expect.stringMatching(photoAlert),
				...fields,
			});
			/** The report of a night that sent `sent` products in its one session. */
			const syncedReport = (sent: number, unchanged: number, confirmed = 1) =>
				report({
					summary: `Catalogue synced: ${sent} changed products sent, ${confirmed} of 1 sessions confirmed, ${unchanged} unchanged`,
					sent,
					unchanged,
				});
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
			type Document = Record<string, unknown>;
			/** The documents a night uploaded: those its pages filled and those it sent at its end. */
			const sentDocuments = (night: StoredExecution): Document[] =>
				[...nodeItems(night, 'Sync Each Page'), ...nodeItems(night, 'Send Collected Products')]
					.flatMap((result) => result.documents as Document[])
					.filter((document) => document.sessionId !== undefined);
			const photoRow = (photo: string, version = 1) => ({
				productId: photo.split('-')[0],
				url: `${shop.url}/photos/${photo}.jpg`,
				version: `2026-01-0${version}T00:00:00.000Z`,
				md5: createHash('md5')
					.update(photoBytes(photo, version, 20_000))
					.digest('hex'),
				hashcode: hashcode(photo, version),
			});
			const storedPhotos = ['P00001-1', 'P00001-2', 'P00002-1', 'P00002-2', 'P00003-1']
				.concat(['P00004-1', 'P00004-2'])
				.sort();

			const first = await n8n.executeWorkflow(id);
			// The shop's first page for its number of pages, then each of the three pages once.
			expect(nodeItems(first, 'One Item per Page')).toEqual([
				{ page: 1 },
				{ page: 2 },
				{ page: 3 },
			]);
			// Each page hands back its counts and alerts, not its products: the pages collected their
			// changed products, too few to fill a document, and P00003 was held back.
			expect(nodeItems(first, 'Sync Each Page')).toEqual([
				{ products: 2, unchanged: 0, collected: 2, documents: [], alerts: [] },
				{
					products: 2,
					unchanged: 0,
					collected: 1,
					documents: [],
					alerts: [expect.stringMatching(photoAlert)],
				},
				{ products: 1, unchanged: 0, collected: 1, documents: [], alerts: [] },
			]);
			const [firstSent] = nodeItems(first, 'Send Collected Products');
			expect(firstSent).toEqual({
				memoryName: 'nightly-sync',
				productsSent: 4,
				documents: [expect.objectContaining({ products: 4, status: 'succeeded' })],
				missing: 0,
				missingProducts: [],
			});
			const [firstDocument] = sentDocuments(first);
			const firstReport = syncedReport(4, 0);
			expect(nodeItems(first, 'Night Report')).toEqual([firstReport]);
			expect(shop.stats()).toMatchObject({
				requests: { 'GET /api/products': 4, 'GET /photos/{photo}': 8 },
				photosSent: 7,
			});
			// Each page's photos in one image request (the page without photos none), then the one
			// document, and its status until it is done.
			expect(n8n.emulator.stats().requests).toEqual({
				'POST /api/images': 2,
				'PUT /api/xml': 1,
				'GET /api/status/{id}/result': expect.any(Number),
			});
			expect(n8n.emulator.stats().images).toBe(7);
			expect(await rows()).toEqual(storedPhotos.map((photo) => photoRow(photo)));
			expect(await productsIn(firstDocument.sessionId)).toEqual([
				...['P00001', 'P00002', 'P00004'].map((product) => ({
					id: product,
					hashcodes: [hashcode(`${product}-1`), hashcode(`${product}-2`)],
				})),
				{ id: 'P00005', hashcodes: [] },
			]);
			// The pages' executions, which hold every photo, are not kept; the night's is.
			expect(await n8n.server.listExecutions({ workflowId: pageId })).toEqual([]);

			// Nothing changed at the shop.
			shop.resetStats();
			const requestsBefore = n8n.emulator.stats().requests;
			const rowsBefore = await rows();
			const second = await n8n.executeWorkflow(id);
			// Only the photo that is gone is asked for again; no photo is downloaded, no image sent.
			expect(shop.stats()).toMatchObject({
				requests: { 'GET /api/products': 4, 'GET /photos/{photo}': 1 },
				photosSent: 0,
			});
			expect(n8n.emulator.stats().requests).toEqual(requestsBefore);
			expect(await rows()).toEqual(rowsBefore);
			expect(nodeItems(second, 'Send Collected Products')).toEqual([
				expect.objectContaining({ productsSent: 0, documents: [] }),
			]);
			const secondReport = report({
				summary:
					'Nothing to send: the service has confirmed all 4 products read tonight as they are now.',
				sent: 0,
				unchanged: 4,
			});
			expect(nodeItems(second, 'Night Report')).toEqual([secondReport]);

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
			// Its row is updated in place; no row added.
			expect(await rows()).toEqual(
				storedPhotos.map((photo) => photoRow(photo, photo === 'P00001-1' ? 2 : 1)),
			);
			const thirdReport = syncedReport(1, 3);
			expect(nodeItems(third, 'Night Report')).toEqual([thirdReport]);
			const [thirdDocument] = sentDocuments(third);
			expect(thirdDocument).toMatchObject({ products: 1, status: 'succeeded' });
			expect(await productsIn(thirdDocument.sessionId)).toEqual([
				{ id: 'P00001', hashcodes: [hashcode('P00001-1', 2), hashcode('P00001-2')] },
			]);

			// The service ends the session of the next changed product with errors: alerted, and the
			// products it did not confirm stay unconfirmed for the next night.
			await postControl(n8n.emulator.url, 'failing', { texts: ['<Id>P00001</Id>'] });
			shop.changePhotos(1);
			const fourth = await n8n.executeWorkflow(id);
			const [fourthDocument] = sentDocuments(fourth);
			expect(fourthDocument).toMatchObject({ products: 1, status: 'failed' });
			const [photoAlertText] = String(nodeItems(fourth, 'Night Report')[0].alerts).split('\n');
			const fourthReport = {
				...syncedReport(1, 3, 0),
				alertCount: 2,
				alerts: `${photoAlertText}\nCatalogue upload ${String(fourthDocument.sessionId)} is failed: ${String(fourthDocument.errorMessage)}. Its 1 products are sent again next night.`,
			};
			expect(photoAlertText).toMatch(photoAlert);
			expect(nodeItems(fourth, 'Night Report')).toEqual([fourthReport]);

			// The shop's second page is down all night, past Get Page's retries: the night fails at
			// that page before anything is uploaded (the first page only collected its changed
			// product), and leaves no report. The page before it took its changed photo and
			// remembered it.
			await postControl(n8n.emulator.url, 'failing', { texts: [] });
			expect(shop.changePhotos(1)).toEqual(['P00001-1']);
			shop.failPages([2]);
			shop.resetStats();
			const beforeFailedNight = n8n.emulator.stats().requests;
			const fifth = await n8n.executeWorkflow(id, { expect: 'failure' });
			// The page workflow's error, with what the shop answered.
			expect(runError(fifth)).toMatchObject({
				node: 'Get Page',
				description: 'The shop is unavailable, try again later',
			});
			// Pages 1 and 2 (three tries), not page 3: the night stops at the page that failed.
			expect(shop.stats()).toMatchObject({
				requests: { 'GET /api/products': 5, 'GET /photos/{photo}': 1 },
				photosSent: 1,
			});
			expect(n8n.emulator.stats().requests).toEqual({
				...beforeFailedNight,
				'POST /api/images': beforeFailedNight['POST /api/images'] + 1,
			});
			expect(await rows()).toEqual(
				storedPhotos.map((photo) => photoRow(photo, photo === 'P00001-1' ? 4 : 1)),
			);

			// The shop back, the next night sends what the failed one would have, once, and downloads
			// nothing.
			shop.failPages([]);
			shop.resetStats();
			const sixth = await n8n.executeWorkflow(id);
			expect(shop.stats()).toMatchObject({ photosSent: 0 });
			const [sixthDocument] = sentDocuments(sixth);
			expect(sixthDocument).toMatchObject({ products: 1, status: 'succeeded' });
			expect(await productsIn(sixthDocument.sessionId)).toEqual([
				{ id: 'P00001', hashcodes: [hashcode('P00001-1', 4), hashcode('P00001-2')] },
			]);
			const { requests: afterSixth } = n8n.emulator.stats();
			expect([afterSixth['POST /api/images'], afterSixth['PUT /api/xml']]).toEqual([
				beforeFailedNight['POST /api/images'] + 1,
				beforeFailedNight['PUT /api/xml'] + 1,
			]);
			const sixthReport = syncedReport(1, 3);
			expect(nodeItems(sixth, 'Night Report')).toEqual([sixthReport]);
			// Each night's report is a row of the reports table.
			expect(
				(await n8n.server.dataTableRows(reportsTable)).map(
					({ at, summary, sent, unchanged, alertCount, alerts }) => ({
						at,
						summary,
						sent,
						unchanged,
						alertCount,
						alerts,
					}),
				),
			).toEqual([firstReport, secondReport, thirdReport, fourthReport, sixthReport]);
		} finally {
			await shop.close();
		}
	});
});
