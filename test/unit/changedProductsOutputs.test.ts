import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import {
	noCheckedProducts,
	runOutput,
	sessionOutcomes,
	type CheckedProducts,
} from '../../nodes/ProductDataIntegration/actions/document/changedProducts/outputs';
import type { Slot } from '../../nodes/ProductDataIntegration/actions/document/sendDocuments';
import { ItemFailures } from '../../nodes/ProductDataIntegration/actions/itemErrors';
import { clockMovingPerRead, timerTurnsDuring } from '../helpers/pauses';

const PRODUCTS = 10_000;

function catalogue(): CheckedProducts {
	const checked = noCheckedProducts();
	for (let itemIndex = 0; itemIndex < PRODUCTS; itemIndex++) {
		const product = `P-${itemIndex}`;
		checked.products.set(itemIndex, product);
		checked.entries.set(itemIndex, {
			destination: 'account',
			product,
			content: `content of ${product}`,
			reason: 'changed',
		});
	}
	return checked;
}

/** One document carrying the whole catalogue, its session confirmed. */
function oneConfirmedDocument(): Slot[] {
	const itemIndexes = Array.from({ length: PRODUCTS }, (_, itemIndex) => itemIndex);
	return [
		{
			uploaded: {
				document: {
					position: 0,
					itemIndexes,
					fileName: null,
					bytes: 1,
					sha256: 'digest',
					validation: 'passed',
				},
				contentType: 'application/xml',
				failOnProcessingError: false,
				json: { sessionId: 'session-1', status: 'succeeded' },
			},
		},
	];
}

describe('Only Changed Products: a whole catalogue is worked through in slices', () => {
	beforeEach(clockMovingPerRead);
	afterEach(() => jest.restoreAllMocks());

	it("reads one document's session outcome for every product with a timer running in between", async () => {
		const { result, turns } = await timerTurnsDuring(
			async () => await sessionOutcomes(oneConfirmedDocument(), catalogue().entries),
		);
		expect(result.confirmed).toHaveLength(PRODUCTS);
		// A pause after every 50 products at the latest: 200 for 10,000.
		expect(turns).toBeGreaterThanOrEqual(100);
	});

	it('builds an output item per product with a timer running in between', async () => {
		const checked = catalogue();
		const outcomes = await sessionOutcomes(oneConfirmedDocument(), checked.entries);
		const items: INodeExecutionData[] = Array.from({ length: PRODUCTS }, (_, itemIndex) => ({
			json: { sku: `P-${itemIndex}` },
		}));
		const failures = new ItemFailures({ continueOnFail: () => false } as IExecuteFunctions);

		const { result, turns } = await timerTurnsDuring(
			async () => await runOutput(items, failures, checked, outcomes, {}, true),
		);
		expect(result).toHaveLength(PRODUCTS);
		expect(result[0].json.run).toMatchObject({ products: PRODUCTS, sent: PRODUCTS });
		expect(turns).toBeGreaterThanOrEqual(100);
	});
});
