/**
 * examples/nightly-sync-delta.json, the nightly sync that asks the shop only for the products changed
 * since its last night, with its page workflow (examples/nightly-sync-page.json), in a real n8n of
 * its own against the fixture shop's delta feed and the emulator, with a Redis for the pages' memory.
 */
import { startRedis, type RedisServer } from '../../scripts/redis';
import type { DataTable } from '../../scripts/n8n/server';
import { productId, startShop, type Shop } from '../../scripts/shop';
import { postControl } from '../helpers/service';
import { takeUploadedSkus } from '../helpers/uploads';
import {
	dataTablesFilled,
	nodeItems,
	prepareN8n,
	readShopExample,
	sharingInRedis,
	type N8nHarness,
	type StoredExecution,
} from './harness';

describe('the nightly sync of a delta feed', () => {
	let redis: RedisServer;
	let n8n: N8nHarness;
	let shop: Shop;

	beforeAll(async () => {
		redis = await startRedis();
		// An n8n of its own: the pages' memory and the data tables are the example's alone.
		n8n = await prepareN8n({ env: {}, credential: sharingInRedis(redis) });
		// Six pages of two; a delta of three products is two pages.
		shop = await startShop({ products: 12, pageSize: 2 });
	});

	afterAll(async () => {
		await shop?.close();
		await n8n?.stop();
		await redis?.stop();
	});

	test('the first night sends every product, the next only the products changed since, a quiet one nothing; after a night with an alert the cursor stays, so its products come again', async () => {
		const page = readShopExample('nightly-sync-page.json', shop);
		const night = readShopExample('nightly-sync-delta.json', shop);
		// The tables as the user creates them, with the columns the workflows' inserts name.
		const tables = new Map<string, DataTable>();
		for (const { name, columns } of [...dataTablesFilled(page), ...dataTablesFilled(night)])
			tables.set(name, await n8n.server.createDataTable(name, columns));
		const cursorTable = tables.get('Nightly Sync Cursor');
		if (!cursorTable) throw new Error('The delta night keeps no cursor in a data table');
		// With their ids, as a user imports them into an n8n of their own: the night's Sync Each Page
		// names the page workflow by its id. The schedule calls the page workflow's published version.
		await n8n.server.activateWorkflow(await n8n.importWorkflow(page));
		const id = await n8n.importWorkflow(night);
		const cursor = async () =>
			(await n8n.server.dataTableRows(cursorTable)).map(({ feed, changedUntil }) => ({
				feed,
				changedUntil,
			}));
		const uploads = () => n8n.emulator.stats().requests['PUT /api/xml'] ?? 0;
		/**
		 * A night, with what the shop's product API answered it and what the service received (the
		 * emulator is reset after each night, keeping the fault rules set before the next).
		 */
		const runNight = async () => {
			shop.resetStats();
			const run = await n8n.executeWorkflow(id);
			return {
				run,
				productRequests: shop.stats().requests['GET /api/products'] ?? 0,
				serviceRequests: Object.values(n8n.emulator.stats().requests).reduce((a, b) => a + b, 0),
				uploads: uploads(),
				skus: await takeUploadedSkus(n8n.emulator, 'Id'),
			};
		};
		const report = (run: StoredExecution) => nodeItems(run, 'Night Report')[0];
		const pagesAsked = (run: StoredExecution) => nodeItems(run, 'One Item per Page');

		// No cursor yet: the whole catalogue, its first page read for its size, then each page.
		const first = await runNight();
		expect(pagesAsked(first.run)).toEqual(
			[1, 2, 3, 4, 5, 6].map((number) => ({ page: number, updatedSince: '' })),
		);
		expect(first.productRequests).toBe(7);
		expect(first.uploads).toBe(1);
		expect(first.skus).toEqual(Array.from({ length: 12 }, (_, index) => productId(index)));
		// A delta cannot tell which products left the catalogue: the night claims none missing.
		expect(report(first.run)).toEqual({
			at: expect.any(String),
			summary: 'Catalogue synced: 12 changed products sent, 1 of 1 sessions confirmed, 0 unchanged',
			sent: 12,
			unchanged: 0,
			alertCount: 0,
			alerts: '',
		});
		const [firstCursor] = await cursor();
		expect(firstCursor).toEqual({
			feed: 'products',
			changedUntil: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
		});

		// Three products change at the shop: the next night reads and sends those three only.
		expect(shop.changeProducts(3, 4)).toEqual(['P00005', 'P00006', 'P00007']);
		const second = await runNight();
		expect(pagesAsked(second.run)).toEqual([
			{ page: 1, updatedSince: firstCursor.changedUntil },
			{ page: 2, updatedSince: firstCursor.changedUntil },
		]);
		expect(second.productRequests).toBe(3);
		expect(second.uploads).toBe(1);
		expect(second.skus).toEqual(['P00005', 'P00006', 'P00007']);
		expect(report(second.run)).toMatchObject({ sent: 3, unchanged: 0, alertCount: 0 });
		const [secondCursor] = await cursor();
		expect(String(secondCursor.changedUntil) > String(firstCursor.changedUntil)).toBe(true);

		// Nothing changed: one empty page of the delta, no request to the service.
		const quiet = await runNight();
		expect(pagesAsked(quiet.run)).toEqual([{ page: 1, updatedSince: secondCursor.changedUntil }]);
		expect(quiet.serviceRequests).toBe(0);
		expect(quiet.skus).toEqual([]);
		expect(report(quiet.run)).toMatchObject({ sent: 0, unchanged: 0, alertCount: 0 });
		expect(await cursor()).toEqual([secondCursor]);

		// The service ends the session of the next change with errors: alerted, and the cursor stays,
		// so the next night reads that product again although it did not change since.
		await postControl(n8n.emulator.url, 'failing', { texts: ['<Id>P00008</Id>'] });
		shop.changeProducts(1, 7);
		const failed = await runNight();
		expect(failed.skus).toEqual(['P00008']);
		expect(report(failed.run)).toMatchObject({ sent: 1, alertCount: 1 });
		expect(await cursor()).toEqual([secondCursor]);
		await postControl(n8n.emulator.url, 'failing', { texts: [] });
		const again = await runNight();
		expect(pagesAsked(again.run)).toEqual([{ page: 1, updatedSince: secondCursor.changedUntil }]);
		expect(again.uploads).toBe(1);
		expect(again.skus).toEqual(['P00008']);
		expect(report(again.run)).toMatchObject({ sent: 1, unchanged: 0, alertCount: 0 });
		const [lastCursor] = await cursor();
		expect(String(lastCursor.changedUntil) > String(secondCursor.changedUntil)).toBe(true);
		expect(await runNight()).toMatchObject({ serviceRequests: 0, skus: [] });
	});
});
