/**
 * examples/nightly-sync-without-redis.json, the nightly sync for an n8n without Redis, with its page
 * workflow (examples/nightly-sync-without-redis-page.json), in a real n8n of its own in regular mode
 * (SQLite, no Redis anywhere, a credential without Rate Limit Sharing) against the fixture shop and
 * the emulator: each product's memory is its row in a data table.
 */
import type { DataTable } from '../../scripts/n8n/server';
import { productId, startShop, type Shop } from '../../scripts/shop';
import { postControl } from '../helpers/service';
import { takeUploadedSkus } from '../helpers/uploads';
import {
	dataTablesFilled,
	nodeItems,
	prepareN8n,
	readShopExample,
	type N8nHarness,
	type StoredExecution,
} from './harness';

/** The held-back product's photo the shop no longer serves. */
const MISSING_PHOTO = 'P00012-2';

describe('the nightly sync without Redis', () => {
	let n8n: N8nHarness;
	let shop: Shop;

	beforeAll(async () => {
		// An n8n of its own in regular mode: no Redis, the credential shares nothing.
		n8n = await prepareN8n({ env: {} });
		// Three pages of four; the last product's second photo is gone, so it is held back each night.
		shop = await startShop({ products: 12, pageSize: 4, missingPhotos: [MISSING_PHOTO] });
	});

	afterAll(async () => {
		await shop?.close();
		await n8n?.stop();
	});

	test('the first night sends every product, a quiet one makes no request to the service, a change sends its products in one upload per page holding one, a product whose session failed goes again next night; one row per product keeps its version, the rows of a page with a change rewritten', async () => {
		expect(n8n.credential.data).not.toHaveProperty('rateLimitSharing');
		const page = readShopExample('nightly-sync-without-redis-page.json', shop);
		const night = readShopExample('nightly-sync-without-redis.json', shop);
		// As the nightly sync with Redis: Code nodes, not If or Set nodes that n8n runs once per item,
		// route the products and photos, and successful executions are not kept.
		const nodes = [...page.nodes, ...night.nodes] as Array<{ type: string }>;
		expect(
			nodes.filter((node) => ['n8n-nodes-base.if', 'n8n-nodes-base.set'].includes(node.type)),
		).toEqual([]);
		expect([page.settings, night.settings]).toEqual([
			expect.objectContaining({ saveDataSuccessExecution: 'none' }),
			expect.objectContaining({ saveDataSuccessExecution: 'none' }),
		]);
		// The tables as the user creates them, with the columns the workflows' inserts name.
		const tables = new Map<string, DataTable>();
		for (const { name, columns } of [...dataTablesFilled(page), ...dataTablesFilled(night)])
			tables.set(name, await n8n.server.createDataTable(name, columns));
		expect([...tables.keys()].sort()).toEqual([
			'Nightly Sync Photos',
			'Nightly Sync Products',
			'Nightly Sync Reports',
		]);
		const productsTable = tables.get('Nightly Sync Products') as DataTable;
		// With their ids, as a user imports them: the night's Sync Each Page names the page workflow
		// by its id. The schedule calls the page workflow's published version.
		await n8n.server.activateWorkflow(await n8n.importWorkflow(page));
		const id = await n8n.importWorkflow(night);
		/** Each product's row (its id and version), after checking the table has one per product. */
		const rows = async () => {
			const stored = await n8n.server.dataTableRows(productsTable);
			const byProduct = new Map(
				stored.map(({ productId: product, id: rowId, version }) => [
					String(product),
					{ rowId: Number(rowId), version: String(version) },
				]),
			);
			expect(byProduct.size).toBe(stored.length);
			return byProduct;
		};
		const versionsOf = (byProduct: Map<string, { version: string }>) =>
			new Map([...byProduct].map(([product, { version }]) => [product, version]));
		/** A night, with what the service received (the emulator is reset after it). */
		const runNight = async () => {
			const run = await n8n.executeWorkflow(id);
			const { requests } = n8n.emulator.stats();
			return {
				run,
				serviceRequests: Object.values(requests).reduce((a, b) => a + b, 0),
				uploads: requests['PUT /api/xml'] ?? 0,
				skus: await takeUploadedSkus(n8n.emulator, 'Id'),
			};
		};
		const report = (run: StoredExecution) => nodeItems(run, 'Night Report')[0];
		const heldBack = expect.stringMatching(
			new RegExp(
				`^Product P00012 not sent tonight, a photo failed: .*/photos/${MISSING_PHOTO}\\.jpg: `,
			),
		);
		const everyProductButHeldBack = Array.from({ length: 11 }, (_, index) => productId(index));
		/** The products of a page of four with a row (the last page's fourth is held back). */
		const pageProducts = (page: number) => everyProductButHeldBack.slice(4 * (page - 1), 4 * page);
		const rowIdsOf = (byProduct: Map<string, { rowId: number }>, products: string[]) =>
			products.map((product) => byProduct.get(product)?.rowId);

		// No version known yet: every product goes, in one upload per page, the held-back one aside.
		const first = await runNight();
		expect(first.uploads).toBe(3);
		expect(first.skus).toEqual(everyProductButHeldBack);
		expect(nodeItems(first.run, 'Sync Each Page')).toEqual([
			{
				products: 4,
				unchanged: 0,
				documents: [expect.objectContaining({ products: 4, status: 'succeeded' })],
				alerts: [],
			},
			{
				products: 4,
				unchanged: 0,
				documents: [expect.objectContaining({ products: 4, status: 'succeeded' })],
				alerts: [],
			},
			{
				products: 4,
				unchanged: 0,
				documents: [expect.objectContaining({ products: 3, status: 'succeeded' })],
				alerts: [heldBack],
			},
		]);
		expect(report(first.run)).toEqual({
			at: expect.any(String),
			summary: 'Catalogue synced: 11 changed products sent, 3 of 3 sessions confirmed, 0 unchanged',
			sent: 11,
			unchanged: 0,
			alertCount: 1,
			alerts: heldBack,
		});
		const firstRows = await rows();
		const firstVersions = versionsOf(firstRows);
		expect([...firstVersions.keys()].sort()).toEqual(everyProductButHeldBack);
		expect([...firstVersions.values()].every((version) => /^c[0-9a-f]{32}$/.test(version))).toBe(
			true,
		);

		// Nothing changed at the shop: no request to the service at all, no write to the table.
		const quiet = await runNight();
		expect(quiet.serviceRequests).toBe(0);
		expect(report(quiet.run)).toMatchObject({
			summary:
				'Nothing to send: the service has confirmed all 11 products read tonight as they are now.',
			sent: 0,
			unchanged: 11,
			alertCount: 1,
		});
		expect(await rows()).toEqual(firstRows);

		// Three products change at the shop, on the first two pages: those three go, in one upload
		// for each of the two pages, which each rewrite their rows (a delete and one insert: new row
		// ids); the last page, unchanged, keeps its rows.
		expect(shop.changeProducts(3, 2)).toEqual(['P00003', 'P00004', 'P00005']);
		const changed = await runNight();
		expect(changed.uploads).toBe(2);
		expect(changed.skus).toEqual(['P00003', 'P00004', 'P00005']);
		expect(report(changed.run)).toMatchObject({
			summary: 'Catalogue synced: 3 changed products sent, 2 of 2 sessions confirmed, 8 unchanged',
			sent: 3,
			unchanged: 8,
			alertCount: 1,
		});
		const changedRows = await rows();
		const changedVersions = versionsOf(changedRows);
		expect([...changedVersions.keys()].sort()).toEqual(everyProductButHeldBack);
		for (const [product, version] of changedVersions)
			expect(version === firstVersions.get(product)).toBe(
				!['P00003', 'P00004', 'P00005'].includes(product),
			);
		const firstRowIds = new Set([...firstRows.values()].map(({ rowId }) => rowId));
		for (const rowId of rowIdsOf(changedRows, [...pageProducts(1), ...pageProducts(2)]))
			expect(firstRowIds.has(rowId as number)).toBe(false);
		expect(rowIdsOf(changedRows, pageProducts(3))).toEqual(rowIdsOf(firstRows, pageProducts(3)));

		// The service ends the session of the next change with errors: alerted, its version not
		// kept, so the next night sends it again although it did not change since.
		await postControl(n8n.emulator.url, 'failing', { texts: ['<Id>P00010</Id>'] });
		expect(shop.changeProducts(1, 9)).toEqual(['P00010']);
		const failed = await runNight();
		expect(failed.skus).toEqual(['P00010']);
		const [failedDocument] = nodeItems(failed.run, 'Sync Each Page')[2].documents as Array<
			Record<string, unknown>
		>;
		expect(failedDocument).toMatchObject({ products: 1, status: 'failed' });
		expect(report(failed.run)).toMatchObject({
			summary: 'Catalogue synced: 1 changed products sent, 0 of 1 sessions confirmed, 10 unchanged',
			sent: 1,
			alertCount: 2,
			alerts: expect.stringContaining(
				`Catalogue upload ${String(failedDocument.sessionId)} is failed: `,
			),
		});
		expect(await rows()).toEqual(changedRows);
		await postControl(n8n.emulator.url, 'failing', { texts: [] });
		const again = await runNight();
		expect(again.uploads).toBe(1);
		expect(again.skus).toEqual(['P00010']);
		expect(report(again.run)).toMatchObject({ sent: 1, unchanged: 10, alertCount: 1 });
		const againRows = await rows();
		const againVersions = versionsOf(againRows);
		expect([...againVersions.keys()].sort()).toEqual(everyProductButHeldBack);
		for (const [product, version] of againVersions)
			expect(version === changedVersions.get(product)).toBe(product !== 'P00010');

		expect(await runNight()).toMatchObject({ serviceRequests: 0, skus: [] });
		expect(await rows()).toEqual(againRows);
	});
});
