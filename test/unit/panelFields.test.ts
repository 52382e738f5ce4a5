import { NodeHelpers, type INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';

/** The fields the editor panel shows for `parameters`, as n8n itself resolves them. */
function shown(parameters: INodeParameters): string[] {
	const { description } = new ProductDataIntegration();
	return Object.keys(
		NodeHelpers.getNodeParameters(
			description.properties,
			parameters,
			true,
			false,
			null,
			description,
		) ?? {},
	);
}

const partOfCatalogue: INodeParameters = {
	resource: 'document',
	operation: 'upload',
	source: 'items',
	onlyChangedProducts: true,
	productsInEachRun: 'partOfCatalogue',
};

describe('the fields of Only Changed Products in the editor panel', () => {
	it('shows Products per Document, not Items per Document, for products collected into full documents', () => {
		const collected = shown({ ...partOfCatalogue, sendChangedProducts: 'collected' });
		expect(collected).toEqual(expect.arrayContaining(['memoryName', 'productsPerDocument']));
		expect(collected).not.toContain('itemsPerDocument');

		const withEachRun = shown({ ...partOfCatalogue, sendChangedProducts: 'withEachRun' });
		expect(withEachRun).toContain('itemsPerDocument');
		expect(withEachRun).not.toContain('productsPerDocument');
	});

	it('shows the Known Version Field, and none of what needs Redis, with the memory kept by the workflow', () => {
		const keptByWorkflow = shown({
			...partOfCatalogue,
			memoryKeptIn: 'workflow',
			sendChangedProducts: 'collected',
		});
		expect(keptByWorkflow).toEqual(
			expect.arrayContaining(['knownVersionField', 'itemsPerDocument']),
		);
		for (const field of ['sendChangedProducts', 'memoryName', 'productsPerDocument'])
			expect(keptByWorkflow).not.toContain(field);
		expect(shown(partOfCatalogue)).not.toContain('knownVersionField');
	});

	it('shows Items per Document again once the collecting setting is out of view', () => {
		expect(
			shown({
				...partOfCatalogue,
				productsInEachRun: 'wholeCatalogue',
				sendChangedProducts: 'collected',
			}),
		).toContain('itemsPerDocument');
	});
});
