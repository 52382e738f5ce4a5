import { readErrorDocument } from '../../nodes/shared/errorDocument';

describe('readErrorDocument', () => {
	it('takes the reason out of a JSON document and keeps the document and its text', () => {
		const text = '{"id":"a","message":"Processing ended with 1 error(s).","errors":[{"code":"X"}]}';
		expect(readErrorDocument(`${text}\n`)).toEqual({
			errorMessage: 'Processing ended with 1 error(s).',
			errorDocument: {
				id: 'a',
				message: 'Processing ended with 1 error(s).',
				errors: [{ code: 'X' }],
			},
			errorText: text,
		});
	});

	it('finds the reason under the other usual names', () => {
		expect(readErrorDocument('{"Message":"A"}').errorMessage).toBe('A');
		expect(readErrorDocument('{"error":"B"}').errorMessage).toBe('B');
		expect(readErrorDocument('{"title":"C","detail":"D"}').errorMessage).toBe('D');
	});

	it('gives the whole text as the reason of JSON that names none', () => {
		expect(readErrorDocument('[{"code":"X"}]')).toEqual({
			errorMessage: '[{"code":"X"}]',
			errorDocument: [{ code: 'X' }],
			errorText: '[{"code":"X"}]',
		});
		expect(readErrorDocument('{"code":7}').errorMessage).toBe('{"code":7}');
	});

	it('keeps text, and text that only looks like JSON, as it is', () => {
		expect(readErrorDocument('  Element <Prodct> is unknown (line 3)\n')).toEqual({
			errorMessage: 'Element <Prodct> is unknown (line 3)',
		});
		expect(readErrorDocument('{not json')).toEqual({ errorMessage: '{not json' });
		expect(readErrorDocument('')).toEqual({ errorMessage: '' });
	});
});
