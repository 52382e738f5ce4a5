/**
 * Only Changed Products in a real n8n (regular mode, SQLite, no Redis): the memory is n8n's own
 * deduplication store in its database, so it outlives a restart of n8n; a session that finished
 * with errors puts its products back; Count Missing Products counts the products a night drops. The catalogue comes from a local HTTP server, as a shop's or
 * PIM's export would, so the workflow (and the node's memory, which n8n keys by workflow and node)
 * stays the same while the products change.
 */
import type { IDataObject } from 'n8n-workflow';

import { listenLocal, type LocalServer } from '../helpers/server';
import { takeUploadedSkus } from '../helpers/uploads';
import { postControl } from '../helpers/service';
import {
	actionNode,
	chainWorkflow,
	nodeItems,
	OWNER,
	prepareN8n,
	type N8nHarness,
	type N8nServer,
} from './harness';

function catalogue(count: number): IDataObject[] {
	return Array.from({ length: count }, (_, index) => ({
		sku: `P-${index}`,
		name: `Product ${index}`,
		price: 10,
	}));
}

describe('Only Changed Products in a real n8n', () => {
	let n8n: N8nHarness;
	let shop: LocalServer;
	let products = catalogue(30);
	const servers: N8nServer[] = [];

	beforeAll(async () => {
		shop = await listenLocal((_, response) => {
			response.setHeader('content-type', 'application/json');
			response.end(JSON.stringify(products));
		});
		// An n8n of its own: the test restarts it.
		n8n = await prepareN8n({ env: {} });
		servers.push(n8n.server);
	});

	afterAll(async () => {
		await Promise.all(servers.map(async (server) => await server.stop()));
		await n8n?.stop();
		await shop?.close();
	});

	test('sends only what changed after a restart, the products of a failed session again, and counts the dropped ones', async () => {
		const workflowId = await n8n.importWorkflow(
			chainWorkflow(
				'Nightly catalogue',
				[{ json: {} }],
				[
					{
						name: 'Shop',
						type: 'n8n-nodes-base.httpRequest',
						typeVersion: 4.2,
						parameters: { url: shop.url },
					},
					actionNode('Upload', {
						resource: 'document',
						operation: 'upload',
						source: 'items',
						rootElement: 'Products',
						itemElement: 'Product',
						onlyChangedProducts: true,
						productField: 'sku',
						countMissingProducts: true,
					}),
				],
			),
		);
		const run = async () => await servers[servers.length - 1].runWorkflow(workflowId);

		const first = await run();
		expect(nodeItems(first, 'Upload')).toHaveLength(30);
		expect(nodeItems(first, 'Upload')[0].run).toMatchObject({ missing: null });
		expect(await takeUploadedSkus(n8n.emulator)).toHaveLength(30);

		await servers[servers.length - 1].stop();
		const restarted = await n8n.folder.start({ env: {} });
		servers.push(restarted);
		await restarted.ensureOwner(OWNER);

		products = catalogue(30);
		products[3].price = 11;
		products[17].name = 'Renamed';
		const second = await run();
		expect(await takeUploadedSkus(n8n.emulator)).toEqual(['P-17', 'P-3']);
		expect(nodeItems(second, 'Upload')[0].run).toMatchObject({
			products: 30,
			sent: 2,
			unchanged: 28,
			sessionsConfirmed: 1,
			missing: 0,
		});

		await postControl(n8n.emulator.url, 'failing', { texts: ['<sku>P-5</sku>'] });
		products[5].price = 12;
		products[6].price = 12;
		const failing = await run();
		expect(nodeItems(failing, 'Upload')[0].run).toMatchObject({ sent: 2, sessionsFailed: 1 });
		await postControl(n8n.emulator.url, 'failing', { texts: [] });
		expect(await takeUploadedSkus(n8n.emulator)).toEqual(['P-5', 'P-6']);

		const again = await run();
		expect(await takeUploadedSkus(n8n.emulator)).toEqual(['P-5', 'P-6']);
		expect(
			nodeItems(again, 'Upload')
				.filter((item) => item.sent)
				.map((item) => item.reason),
		).toEqual(['sentAgainAfterFailure', 'sentAgainAfterFailure']);

		const quiet = await run();
		expect(n8n.emulator.stats().requests).toEqual({});
		expect(String((nodeItems(quiet, 'Upload')[0].run as IDataObject).message)).toMatch(
			/^Nothing to send/,
		);

		// Three products leave the catalogue, one of them the one whose session failed and was sent again.
		products = products.filter(({ sku }) => !['P-5', 'P-20', 'P-29'].includes(String(sku)));
		products[0].price = 13;
		const dropped = await run();
		expect(await takeUploadedSkus(n8n.emulator)).toEqual(['P-0']);
		expect(nodeItems(dropped, 'Upload')[0].run).toMatchObject({
			products: 27,
			sent: 1,
			unchanged: 26,
			missing: 3,
		});
		const after = await run();
		expect(n8n.emulator.stats().requests).toEqual({});
		expect(nodeItems(after, 'Upload')[0].run).toMatchObject({ unchanged: 27, missing: 0 });
	});
});
