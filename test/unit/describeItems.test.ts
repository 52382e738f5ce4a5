import { describeItems } from '../../nodes/ProductDataIntegration/actions/document/documents';

describe('describeItems: the input items a document stands for, in an error message', () => {
	it('names one item, and a run of consecutive items as a range', () => {
		expect(describeItems([3])).toBe('item 3');
		expect(describeItems([0, 1, 2, 3])).toBe('items 0-3');
	});

	it('lists a group with gaps (the changed products of a run) instead of a range that would take in others', () => {
		expect(describeItems([2, 5, 9])).toBe('items 2, 5, 9');
		expect(describeItems([2, 5, 9, 10, 11, 40, 41])).toBe('items 2, 5, 9 and 4 more');
	});
});
