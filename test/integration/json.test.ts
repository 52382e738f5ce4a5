/**
 * JSON from the service has bounded nesting: an answer nested far deeper than any the service
 * gives (within the 1 MiB cap) is a clear error or text, never a stack overflow or an item n8n
 * cannot store.
 */
import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { parseUploadAnswer } from '../../nodes/ProductDataIntegration/actions/image/responses';
import { readErrorDocument } from '../../nodes/shared/errorDocument';
import { parseServiceJson } from '../../nodes/shared/transport';
import { emulatorCredentials, runNode } from '../../scripts/n8n/in-process';
import { listenLocal } from '../helpers/server';

/** Arrays nested `depth` levels deep: 500,000 levels are 1,000,000 bytes, within the 1 MiB cap. */
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('parseServiceJson', () => {
	it('reads JSON nested 64 levels deep, and refuses 65', () => {
		expect(() => parseServiceJson(nested(64))).not.toThrow();
		expect(() => parseServiceJson(nested(65))).toThrow(
			new SyntaxError('JSON nested more than 64 levels deep'),
		);
		expect(() => parseServiceJson(`{"a":${nested(65)}}`)).toThrow(SyntaxError);
	});

	it('does not count brackets inside strings, escaped quotes included', () => {
		expect(parseServiceJson(`{"text":"${'['.repeat(1000)}\\"${'{'.repeat(1000)}"}`)).toEqual({
			text: `${'['.repeat(1000)}"${'{'.repeat(1000)}`,
		});
	});
});

describe('an answer nested 500,000 levels deep', () => {
	it('an error document is taken as text, and its fields can be stored', () => {
		const fields = readErrorDocument(nested(500_000));
		expect(fields.errorDocument).toBeUndefined();
		expect(fields.errorMessage).toHaveLength(1_000_000);
		expect(() => JSON.stringify(fields)).not.toThrow();
	});

	it('an image upload answer is no layout the node recognises', () => {
		expect(parseUploadAnswer(nested(500_000))).toBeUndefined();
	});

	it('Get Environment Info fails its item with a clear error', async () => {
		const server = await listenLocal((req, res) => {
			req.resume();
			res.writeHead(200, { 'content-type': 'application/json' });
			res.end(nested(500_000));
		});
		try {
			const { error } = await runNode({
				node: new ProductDataIntegration(),
				parameters: { resource: 'account', operation: 'getEnvironmentInfo', options: {} },
				credentials: emulatorCredentials(server),
			});
			expect(error?.message).toBe(
				'The service answered GET /api/auth/me with JSON nested more than 64 levels deep, deeper than this request reads',
			);
		} finally {
			await server.close();
		}
	});
});
