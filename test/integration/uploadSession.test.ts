import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import type { Emulator } from '../../scripts/emulator';
import { runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, fastCredentials, useEmulator } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';

const node = new ProductDataIntegration();
const UNKNOWN_SESSION = '00000000-0000-4000-a000-000000000000';

function session(operation: string, parameters: IDataObject): INodeParameters {
	return { resource: 'uploadSession', operation, ...parameters } as INodeParameters;
}

describe('Upload Session', () => {
	const { emulator } = useEmulator(FAST_BUCKET);
	const { emulator: relative } = useEmulator({ ...FAST_BUCKET, errorLocation: 'relative' });
	const credentials = (target: Emulator = emulator) => fastCredentials(target);

	async function uploadText(xml: string, target: Emulator = emulator): Promise<string> {
		const { output, error } = await runNode({
			node,
			parameters: { resource: 'document', operation: 'upload', source: 'text', xml },
			credentials: credentials(target),
		});
		expect(error).toBeUndefined();
		return output[0][0].json.sessionId as string;
	}

	const succeeding = async () => await uploadText('<Products><Product/></Products>');
	const failing = async (target?: Emulator) =>
		await uploadText('<Products><!--emulator:fail--><Product/></Products>', target);
	const slow = async () =>
		await uploadText('<Products><!--emulator:processing-ms=600000--><Product/></Products>');

	describe('Is Done', () => {
		it('tells whether processing has finished, per item', async () => {
			const done = await succeeding();
			const pending = await slow();

			const { output, error } = await runNode({
				node,
				parameters: session('isDone', { sessionId: '={{ $json.id }}' }),
				items: [{ json: { id: done } }, { json: { id: ` ${pending.toUpperCase()} ` } }],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{ json: { sessionId: done, done: true }, pairedItem: { item: 0 } },
				{ json: { sessionId: pending.toUpperCase(), done: false }, pairedItem: { item: 1 } },
			]);
		});

		it('names the item and the field of an invalid session ID before any request', async () => {
			const { error } = await runNode({
				node,
				parameters: session('isDone', { sessionId: '={{ $json.id }}' }),
				items: [{ json: { id: 'not-a-session' } }, { json: { id: UNKNOWN_SESSION } }],
				credentials: credentials(),
			});

			expect(error?.message).toBe('The Session ID of item 0 is not a session ID: "not-a-session"');
			expect(error?.description).toContain('GUID');
			expect(emulator.stats().requests).toEqual({});
		});

		it('reports an unknown session, and continues on fail', async () => {
			const done = await succeeding();
			const { output, error } = await runNode({
				node,
				parameters: session('isDone', { sessionId: '={{ $json.id }}' }),
				items: [{ json: { id: UNKNOWN_SESSION } }, { json: { id: '' } }, { json: { id: done } }],
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0][0]).toEqual({
				json: expect.objectContaining({ error: expect.stringContaining('Not found') }),
				pairedItem: { item: 0 },
			});
			expect(output[0][1]).toEqual({
				json: expect.objectContaining({ error: 'The Session ID of item 1 is empty' }),
				pairedItem: { item: 1 },
			});
			expect(output[0][2].json).toEqual({ sessionId: done, done: true });
		});
	});

	describe('Get Result', () => {
		it('gives succeeded, processing and failed with the URL of the error message', async () => {
			const ids = [await succeeding(), await slow(), await failing()];

			const { output, error } = await runNode({
				node,
				parameters: session('getResult', { sessionId: '={{ $json.id }}' }),
				items: ids.map((id) => ({ json: { id } })),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{ json: { sessionId: ids[0], status: 'succeeded' }, pairedItem: { item: 0 } },
				{ json: { sessionId: ids[1], status: 'processing' }, pairedItem: { item: 1 } },
				{
					json: {
						sessionId: ids[2],
						status: 'failed',
						errorUrl: `${emulator.url}/api/status/${ids[2]}/errors`,
					},
					pairedItem: { item: 2 },
				},
			]);
			expect(emulator.stats().requests['GET /api/status/{id}/errors']).toBeUndefined();
		});

		it('fetches the error message when asked, also behind a relative Location', async () => {
			const id = await failing(relative);

			const { output, error } = await runNode({
				node,
				parameters: session('getResult', { sessionId: id, options: { includeErrorMessage: true } }),
				credentials: credentials(relative),
			});

			expect(error).toBeUndefined();
			const { json } = output[0][0];
			expect(json.errorUrl).toBe(`${relative.url}/api/status/${id}/errors`);
			expect(json.errorMessage).toMatch(/^Processing of the document ended with \d+ error\(s\)\.$/);
			expect(JSON.parse(json.errorText as string)).toEqual(json.errorDocument);
			expect(json.errorDocument).toMatchObject({
				id,
				errors: [expect.objectContaining({ code: 'ProcessingFailed' })],
			});
		});
	});

	describe('Wait for Completion', () => {
		it('waits for the sessions of all items together, one output item per session', async () => {
			const first = await succeeding();
			const second = await failing();
			const third = await succeeding();

			const { output, error } = await runNode({
				node,
				parameters: session('waitForCompletion', {
					sessionIds: '={{ $json.ids }}',
					options: { timeout: 30 },
				}),
				items: [{ json: { ids: `${first}, ${second}` } }, { json: { ids: [third] } }],
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{ json: { sessionId: first, status: 'succeeded' }, pairedItem: { item: 0 } },
				{
					json: {
						sessionId: second,
						status: 'failed',
						errorUrl: `${emulator.url}/api/status/${second}/errors`,
					},
					pairedItem: { item: 0 },
				},
				{ json: { sessionId: third, status: 'succeeded' }, pairedItem: { item: 1 } },
			]);
			expect(emulator.stats().requests['GET /api/status/{id}/result']).toBe(3);
		});

		it('outputs sessions still processing at the timeout', async () => {
			const pending = await slow();
			const done = await succeeding();

			const { output, error } = await runNode({
				node,
				parameters: session('waitForCompletion', {
					sessionIds: `${pending}\n${done}`,
					options: { timeout: 0, includeErrorMessage: true },
				}),
				credentials: credentials(),
			});

			expect(error).toBeUndefined();
			expect(output[0].map(({ json }) => json)).toEqual([
				{ sessionId: pending, status: 'processing', timedOut: true },
				{ sessionId: done, status: 'succeeded' },
			]);
		});

		it('checks every item before the first request', async () => {
			const done = await succeeding();
			const { error } = await runNode({
				node,
				parameters: session('waitForCompletion', { sessionIds: '={{ $json.ids }}' }),
				items: [{ json: { ids: done } }, { json: { ids: `${done}, 12345` } }],
				credentials: credentials(),
			});

			expect(error?.message).toBe('The Session IDs of item 1 is not a session ID: "12345"');
			expect(emulator.stats().requests['GET /api/status/{id}/result']).toBeUndefined();
		});

		it('refuses a timeout that is no number, before any request', async () => {
			const pending = await slow();
			const { error } = await runNode({
				node,
				parameters: session('waitForCompletion', {
					sessionIds: pending,
					options: { timeout: '={{ "soon" }}' },
				}),
				credentials: credentials(),
			});

			expect(error?.message).toBe(
				'The Timeout (Seconds) of item 0 is not a number of seconds: "soon"',
			);
			expect(emulator.stats().requests['GET /api/status/{id}/result']).toBeUndefined();
		});

		it('names the item whose session the service does not know', async () => {
			const done = await succeeding();
			const { error } = await runNode({
				node,
				parameters: session('waitForCompletion', { sessionIds: '={{ $json.id }}' }),
				items: [{ json: { id: done } }, { json: { id: UNKNOWN_SESSION } }],
				credentials: credentials(),
			});

			expect(error?.message).toContain(`Not found: GET /api/status/${UNKNOWN_SESSION}/result`);
			expect(error?.context?.itemIndex).toBe(1);
		});

		it('fails bad items and waits for the others under continue on fail', async () => {
			const done = await succeeding();
			const { output, error } = await runNode({
				node,
				parameters: session('waitForCompletion', { sessionIds: '={{ $json.ids }}' }),
				items: [{ json: { ids: '' } }, { json: { ids: done } }],
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{
					json: expect.objectContaining({ error: 'The Session IDs of item 0 is empty' }),
					pairedItem: { item: 0 },
				},
				{ json: { sessionId: done, status: 'succeeded' }, pairedItem: { item: 1 } },
			]);
		});

		it('fails only the item whose session the service does not know, under continue on fail', async () => {
			const done = await succeeding();
			const { output, error } = await runNode({
				node,
				parameters: session('waitForCompletion', { sessionIds: '={{ $json.id }}' }),
				items: [{ json: { id: UNKNOWN_SESSION } }, { json: { id: done } }],
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0]).toEqual([
				{
					json: expect.objectContaining({ error: expect.stringContaining('Not found') }),
					pairedItem: { item: 0 },
				},
				{ json: { sessionId: done, status: 'succeeded' }, pairedItem: { item: 1 } },
			]);
		});

		it('turns every waiting item into an error item when the service refuses, under continue on fail', async () => {
			const { output } = await runNode({
				node,
				parameters: session('waitForCompletion', { sessionIds: '={{ $json.id }}' }),
				items: [{ json: { id: UNKNOWN_SESSION } }],
				credentials: credentials(),
				continueOnFail: true,
			});

			expect(output[0]).toEqual([
				{
					json: expect.objectContaining({ error: expect.stringContaining('Not found') }),
					pairedItem: { item: 0 },
				},
			]);
		});

		it("ends the wait at once when the credential's login is refused, instead of asking about every session", async () => {
			const ids = Array.from(
				{ length: 12 },
				(_, n) => `00000000-0000-4000-a000-${String(n).padStart(12, '0')}`,
			);
			const { output, error } = await runNode({
				node,
				parameters: session('waitForCompletion', { sessionIds: '={{ $json.id }}' }),
				items: ids.map((id) => ({ json: { id } })),
				credentials: fastCredentials(emulator, { password: 'wrong-password' }),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0]).toHaveLength(12);
			output[0].forEach((item, n) => {
				expect(item).toEqual({
					json: expect.objectContaining({ error: expect.any(String) }),
					pairedItem: { item: n },
				});
			});
			const { requests } = emulator.stats();
			// The polls already in flight when the first refusal comes back (at most 4 at once), and one
			// check of the credential's own login.
			expect(requests['GET /api/status/{id}/result']).toBeLessThanOrEqual(4);
			expect(requests['GET /api/auth/me']).toBe(1);
		});
	});
});

describe('Upload Session: answers the emulator does not give', () => {
	let server: LocalServer;
	let doneBody = '';

	beforeAll(async () => {
		server = await listenLocal((req, res) => {
			if (req.url?.endsWith('/done')) {
				res.writeHead(200, { 'Content-Type': 'text/plain' });
				res.end(doneBody);
				return;
			}
			res.writeHead(404).end();
		});
	});

	afterAll(async () => {
		await server.close();
	});

	it.each([
		['true', true],
		['"true"', true],
		['True', true],
		[' FALSE\n', false],
		['"false"', false],
	])('reads %j as done = %s', async (body, done) => {
		doneBody = body;
		const { output, error } = await runNode({
			node,
			parameters: session('isDone', { sessionId: UNKNOWN_SESSION }),
			credentials: fastCredentials(server),
		});

		expect(error).toBeUndefined();
		expect(output[0][0].json).toEqual({ sessionId: UNKNOWN_SESSION, done });
	});

	it('fails on an answer that is no boolean', async () => {
		doneBody = 'maybe';
		const { error } = await runNode({
			node,
			parameters: session('isDone', { sessionId: UNKNOWN_SESSION }),
			credentials: fastCredentials(server),
		});

		expect(error?.message).toBe(
			'The service answered neither true nor false to whether the session is done',
		);
	});

	it('shows an answer that is no boolean on one line', async () => {
		doneBody = 'maybe\n2026-01-01T00:00:00.000Z | error | Forged entry';
		const { error } = await runNode({
			node,
			parameters: session('isDone', { sessionId: UNKNOWN_SESSION }),
			credentials: fastCredentials(server),
		});

		expect(error?.description).toBe(
			'It answered: maybe 2026-01-01T00:00:00.000Z | error | Forged entry',
		);
	});
});

describe('Upload Session: a login refused with 403', () => {
	it('ends the wait at once, instead of asking about every session', async () => {
		const asked: string[] = [];
		const server = await listenLocal((req, res) => {
			asked.push(req.url ?? '');
			req.resume();
			res.writeHead(403, { 'Content-Type': 'application/json' }).end('{"message":"Forbidden"}');
		});
		try {
			const ids = Array.from(
				{ length: 12 },
				(_, n) => `00000000-0000-4000-a000-${String(n).padStart(12, '0')}`,
			);
			const { output, error } = await runNode({
				node,
				parameters: session('waitForCompletion', { sessionIds: '={{ $json.id }}' }),
				items: ids.map((id) => ({ json: { id } })),
				credentials: fastCredentials(server),
				continueOnFail: true,
			});

			expect(error).toBeUndefined();
			expect(output[0].map((item) => item.json.error)).toEqual(ids.map(() => 'Forbidden'));
			expect(asked.filter((url) => url.startsWith('/api/status/')).length).toBeLessThanOrEqual(4);
			expect(asked.filter((url) => url === '/api/auth/me')).toHaveLength(1);
		} finally {
			await server.close();
		}
	});
});

describe('Upload Session: an error document on another host', () => {
	const FAILED = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
	let service: LocalServer;
	let documents: LocalServer;
	const seen: Array<{ url: string; headers: Record<string, unknown> }> = [];

	beforeAll(async () => {
		documents = await listenLocal((req, res) => {
			seen.push({ url: req.url ?? '', headers: req.headers });
			req.resume();
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end(
				JSON.stringify({ message: 'Line 3: the element Sku is empty', errors: [{ line: 3 }] }),
			);
		});
		service = await listenLocal((req, res) => {
			req.resume();
			res.writeHead(301, { Location: `${documents.url}/blobs/${FAILED}.json?sig=abc` }).end();
		});
	});

	afterAll(async () => {
		await service.close();
		await documents.close();
	});

	beforeEach(() => {
		seen.length = 0;
	});

	it.each([
		[
			'Get Result',
			session('getResult', { sessionId: FAILED, options: { includeErrorMessage: true } }),
		],
		[
			'Wait for Completion',
			session('waitForCompletion', { sessionIds: FAILED, options: { includeErrorMessage: true } }),
		],
	])(
		'%s fetches it without the credential and outputs its message',
		async (_operation, parameters) => {
			// The document host is on this machine: Allowed Internal Hosts names it.
			const allowedInternalHosts = new URL(documents.url).host;
			const { output, error } = await runNode({
				node,
				parameters: {
					...parameters,
					options: { ...(parameters.options as object), allowedInternalHosts },
				},
				credentials: fastCredentials(service),
			});

			expect(error).toBeUndefined();
			expect(output[0][0].json).toMatchObject({
				sessionId: FAILED,
				status: 'failed',
				errorUrl: `${documents.url}/blobs/${FAILED}.json?sig=abc`,
				errorMessage: 'Line 3: the element Sku is empty',
				errorDocument: { message: 'Line 3: the element Sku is empty', errors: [{ line: 3 }] },
			});
			expect(output[0][0].json.warning).toBeUndefined();
			expect(seen).toHaveLength(1);
			expect(seen[0].url).toBe(`/blobs/${FAILED}.json?sig=abc`);
			expect(seen[0].headers.authorization).toBeUndefined();
			expect(seen[0].headers.customerid).toBeUndefined();
			expect(seen[0].headers.customeridtype).toBeUndefined();
		},
	);
});
