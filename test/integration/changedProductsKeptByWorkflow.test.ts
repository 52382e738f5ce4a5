import { randomUUID } from 'node:crypto';

import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { EDITION as fullEdition } from '../../nodes/edition/edition';
import { EDITION as verifiedEdition } from '../../nodes/edition/edition.verified';
import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { useEdition } from '../../nodes/shared/ports';
import { call } from '../../scripts/emulator/client';
import { deduplicator, runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, fastCredentials, requestsSpent, useEmulator } from '../helpers/emulator';
import { asItems, onlyChangedFromItems, products } from '../helpers/changedProducts';
import { postControl } from '../helpers/service';
import { takeUploadedSkus } from '../helpers/uploads';

/**
 * Only Changed Products for part of the catalogue, with the memory kept by the workflow: each item
 * brings the version the node handed back when the service last confirmed its product (as a Data
 * Table would keep it), and no Redis and no store of n8n is asked.
 */

jest.setTimeout(30_000);

const node = new ProductDataIntegration();

function keptByWorkflow(extra: IDataObject = {}): INodeParameters {
	return onlyChangedFromItems({
		productsInEachRun: 'partOfCatalogue',
		memoryKeptIn: 'workflow',
		knownVersionField: 'knownVersion',
		...extra,
	});
}

/** The versions a run handed back, by product, as a workflow would keep them. */
function keptVersions(output: INodeExecutionData[]): Map<string, string> {
	const kept = new Map<string, string>();
	for (const { json } of output)
		if (typeof json.version === 'string') kept.set(String(json.product), json.version);
	return kept;
}

/** The products, each with the version kept of it (none for a product never confirmed). */
function withKnown(json: IDataObject[], kept: Map<string, string>): INodeExecutionData[] {
	return json.map((product) => ({
		json: { ...product, knownVersion: kept.get(String(product.sku)) ?? '' },
	}));
}

describe('Only Changed Products, memory kept by the workflow', () => {
	const { emulator } = useEmulator(FAST_BUCKET);
	let nodeId: string;

	const requests = () => requestsSpent(emulator);

	async function run(
		items: INodeExecutionData[],
		parameters = keptByWorkflow(),
		credentials = fastCredentials(emulator),
		continueOnFail = false,
	) {
		return await runNode({ node, nodeId, parameters, items, credentials, continueOnFail });
	}

	beforeEach(() => {
		nodeId = randomUUID();
	});

	it('sends only what changed since the versions handed in, asking neither Redis nor n8n’s store', async () => {
		const first = await run(asItems(products(0, 10)));
		expect(first.error).toBeUndefined();
		expect(await takeUploadedSkus(emulator)).toHaveLength(10);
		const kept = keptVersions(first.output[0]);
		expect(kept.size).toBe(10);
		expect([...kept.values()].every((version) => /^c[0-9a-f]{32}$/.test(version))).toBe(true);
		expect(Object.keys(deduplicator.sizes()).filter((key) => key.includes(nodeId))).toEqual([]);

		// The versions handed back are all the next run needs: another node, another workflow.
		nodeId = randomUUID();
		const quiet = await run(withKnown(products(0, 10), kept));
		expect(requests()).toBe(0);
		expect(quiet.output[0][0].json.run).toMatchObject({ products: 10, sent: 0, unchanged: 10 });
		expect(keptVersions(quiet.output[0])).toEqual(kept);

		const page = products(0, 10);
		page[3].price = 99;
		const changed = await run(withKnown(page, kept));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-3']);
		expect(changed.output[0][3]).toMatchObject({
			json: { product: 'P-3', sent: true, reason: 'changed', confirmed: true },
			pairedItem: { item: 3 },
		});
		expect(changed.output[0][3].json.version).not.toBe(kept.get('P-3'));
		expect(changed.output[0][4].json).toMatchObject({ sent: false, version: kept.get('P-4') });
	});

	it('leaves the known version out of the XML sent and of the content compared', async () => {
		const first = await run(withKnown(products(0, 2), new Map()));
		const sent = await Promise.all(
			emulator
				.uploads()
				.map(async ({ id }) => (await call(emulator, 'GET', `/api/files/${id}`)).text),
		);
		expect(sent.join('')).toContain('<sku>P-0</sku>');
		expect(sent.join('')).not.toContain('knownVersion');
		emulator.reset();

		// Handed in without an empty field, or with the field missing, the product is the same.
		const again = await run(
			asItems(products(0, 2)).map((item, index) => ({
				json: { knownVersion: first.output[0][index].json.version, ...item.json },
			})),
		);
		expect(requests()).toBe(0);
		expect(again.output[0][0].json.run).toMatchObject({ unchanged: 2 });
	});

	it('hands back no version for a product whose session finished with errors: it goes again', async () => {
		await postControl(emulator.url, 'failing', { texts: ['<sku>P-2</sku>'] });
		const first = await run(asItems(products(0, 4)), keptByWorkflow({ itemsPerDocument: 2 }));
		await postControl(emulator.url, 'failing', { texts: [] });
		expect(first.output[0][2].json).toMatchObject({ status: 'failed', confirmed: false });
		expect(first.output[0][2].json).not.toHaveProperty('version');
		const kept = keptVersions(first.output[0]);
		expect([...kept.keys()].sort()).toEqual(['P-0', 'P-1']);
		emulator.reset();

		await run(withKnown(products(0, 4), kept), keptByWorkflow({ itemsPerDocument: 2 }));
		expect(await takeUploadedSkus(emulator)).toEqual(['P-2', 'P-3']);
	});

	it('answers only to the password: another password makes every product new', async () => {
		const kept = keptVersions((await run(asItems(products(0, 3)))).output[0]);
		emulator.reset();
		// Validate Only asks the service nothing, so the emulator need not know the other password.
		const other = await run(
			withKnown(products(0, 3), kept),
			keptByWorkflow({ validateOnly: true }),
			fastCredentials(emulator, { password: 'another password' }),
		);
		expect(other.output[0][0].json.run).toMatchObject({ wouldSend: 3, unchanged: 0 });
		const same = await run(withKnown(products(0, 3), kept), keptByWorkflow({ validateOnly: true }));
		expect(same.output[0][0].json.run).toMatchObject({ wouldSend: 0, unchanged: 3 });
	});

	it('names the item and the field of a known version it never handed out, before any request', async () => {
		const items = withKnown(products(0, 3), new Map());
		items[1].json.knownVersion = '2026-12-01T10:00:00Z';
		const refused = await run(items);
		expect(refused.error?.message).toBe(
			'The known version field "knownVersion" of item 1 is "2026-12-01T10:00:00Z", not a version this node output',
		);
		expect(requests()).toBe(0);

		items[1].json.knownVersion = 42;
		const alone = await run(items, keptByWorkflow(), fastCredentials(emulator), true);
		expect(alone.error).toBeUndefined();
		expect(alone.output[0][1]).toMatchObject({
			json: {
				error:
					'The known version field "knownVersion" of item 1 is a number, not a version this node output',
			},
			pairedItem: { item: 1 },
		});
		expect(await takeUploadedSkus(emulator)).toEqual(['P-0', 'P-2']);
		expect(alone.output[0][0].json.run).toMatchObject({ sent: 2, invalid: 1 });
	});

	it('refuses a Known Version Field that is the Product Field', async () => {
		const refused = await run(
			asItems(products(0, 1)),
			keptByWorkflow({ knownVersionField: 'sku' }),
		);
		expect(refused.error?.message).toBe('Known Version Field and Product Field both name "sku"');
		expect(requests()).toBe(0);
	});

	it('with Validate Only says what would go and hands back no version; Send All Products sends all', async () => {
		const kept = keptVersions((await run(asItems(products(0, 4)))).output[0]);
		emulator.reset();
		const page = products(0, 4);
		page[0].price = 1;
		const validated = await run(withKnown(page, kept), keptByWorkflow({ validateOnly: true }));
		expect(requests()).toBe(0);
		expect(validated.output[0][0].json.run).toMatchObject({ wouldSend: 1, unchanged: 3 });
		expect(keptVersions(validated.output[0]).size).toBe(0);

		const all = await run(withKnown(page, kept), keptByWorkflow({ sendAllProducts: true }));
		expect(await takeUploadedSkus(emulator)).toHaveLength(4);
		expect(keptVersions(all.output[0]).size).toBe(4);
	});

	it('without Output Unchanged Products, a quiet run outputs its summary alone', async () => {
		const kept = keptVersions((await run(asItems(products(0, 5)))).output[0]);
		emulator.reset();
		const quiet = await run(
			withKnown(products(0, 5), kept),
			keptByWorkflow({ outputUnchangedProducts: false }),
		);
		expect(requests()).toBe(0);
		expect(quiet.output[0]).toEqual([
			{
				json: { run: expect.objectContaining({ sent: 0, unchanged: 5 }) },
				pairedItem: { item: 0 },
			},
		]);
	});

	describe('in the verified edition, which has no Redis', () => {
		beforeAll(() => useEdition(verifiedEdition));
		afterAll(() => useEdition(fullEdition));

		it('works all the same', async () => {
			const kept = keptVersions((await run(asItems(products(0, 3)))).output[0]);
			expect(kept.size).toBe(3);
			emulator.reset();
			await run(withKnown(products(0, 3), kept));
			expect(requests()).toBe(0);
		});
	});
});
