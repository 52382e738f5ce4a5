import { ambiguousDescription } from '../../nodes/shared/transport/errors';

describe('what an upload that may have arrived tells the user to do', () => {
	it("a document: Retry On Fail looks for it in the list of the day's uploads", () => {
		expect(ambiguousDescription({ url: 'https://service.example/api/xml' })).toMatch(
			/list of the day's uploads/,
		);
		expect(ambiguousDescription({ url: 'https://service.example/api/xml/custom' })).toMatch(
			/list of the day's uploads/,
		);
	});

	it('an image: no list tells, Skip Existing looks it up by md5', () => {
		const text = ambiguousDescription({ url: 'https://service.example/api/images' });
		expect(text).toMatch(/Skip Existing/);
		expect(text).not.toMatch(/list of the day's uploads/);
	});
});
