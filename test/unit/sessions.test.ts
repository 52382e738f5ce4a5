import type { INode } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	getSessionOutcome,
	normalizeSessionId,
	waitForSessions,
	type WaitPacing,
	type WaitResult,
} from '../../nodes/shared/sessions';
import * as transport from '../../nodes/shared/transport';
import type { ServiceContext, ServiceRequest, ServiceResponse } from '../../nodes/shared/transport';

jest.mock('../../nodes/shared/transport', () => ({
	...jest.requireActual('../../nodes/shared/transport'),
	serviceRequest: jest.fn(),
	fetchServiceUrl: jest.fn(),
}));

const serviceRequest = transport.serviceRequest as unknown as jest.Mock<
	Promise<ServiceResponse>,
	[ServiceContext, ServiceRequest]
>;
const fetchServiceUrl = transport.fetchServiceUrl as unknown as jest.Mock<
	Promise<ServiceResponse<string>>,
	[ServiceContext, string, number?]
>;

const NODE: INode = {
	id: 'node',
	name: 'Node',
	type: 'n8n-nodes-product-data-integration.productDataIntegration',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

const A = '11111111-1111-4111-a111-111111111111';
const B = '22222222-2222-4222-a222-222222222222';
const C = '33333333-3333-4333-a333-333333333333';

let abort: AbortController;

function context(): ServiceContext {
	return {
		getNode: () => NODE,
		getCredentials: async () => ({ baseUrl: 'https://service.example/base/' }),
		getExecutionCancelSignal: () => abort.signal,
	} as unknown as ServiceContext;
}

function answer(statusCode: number, headers: Record<string, string> = {}): ServiceResponse {
	return {
		statusCode,
		headers,
		body: statusCode === 202 ? 'The request is still being processed.' : '',
	};
}

function serverError(status: number): NodeApiError {
	return new NodeApiError(NODE, { message: 'failed' }, { httpCode: String(status) });
}

/** The session ID a /result request was for. */
function sessionOf(request: ServiceRequest): string {
	return decodeURIComponent(request.path.split('/')[3]);
}

/**
 * Answers /result from a script per session: each entry is the answer of one poll, the last one
 * repeats. Records when (fake clock) each session was asked.
 */
function script(answers: Record<string, Array<number | Error>>): Record<string, number[]> {
	const asked: Record<string, number[]> = {};
	serviceRequest.mockImplementation(async (_context, request) => {
		const id = sessionOf(request);
		asked[id] = [...(asked[id] ?? []), Date.now()];
		const list = answers[id];
		const next = list[Math.min(asked[id].length - 1, list.length - 1)];
		if (next instanceof Error) throw next;
		return next === 301
			? answer(301, { location: `https://service.example/errors/${id}` })
			: answer(next);
	});
	return asked;
}

interface WaitFor extends WaitPacing {
	timeoutMs: number;
	includeErrorMessage?: boolean;
}

/** Sessions of one item (index 0) awaited with the same settings; the outcomes by session ID. */
async function waitFor(
	ids: string[],
	{ timeoutMs, includeErrorMessage = false, ...pacing }: WaitFor,
): Promise<Map<string, WaitResult>> {
	const sessions = ids.map((sessionId) => ({
		sessionId,
		itemIndex: 0,
		includeErrorMessage,
		timeoutMs,
	}));
	const outcomes = await waitForSessions(context(), sessions, pacing);
	return new Map(ids.map((id, index) => [id, outcomes[index]]));
}

/** Runs the promise to its end on the fake clock. */
async function settle<T>(promise: Promise<T>): Promise<T> {
	let done = false;
	promise.then(
		() => (done = true),
		() => (done = true),
	);
	for (let step = 0; step < 1000 && !done; step++) await jest.advanceTimersByTimeAsync(1000);
	return await promise;
}

beforeEach(() => {
	jest.useFakeTimers({ now: 0 });
	abort = new AbortController();
	serviceRequest.mockReset();
	fetchServiceUrl.mockReset();
});

afterEach(() => {
	jest.useRealTimers();
});

describe('normalizeSessionId', () => {
	it('accepts GUID-like text, trimmed and unquoted', () => {
		expect(normalizeSessionId(A)).toBe(A);
		expect(normalizeSessionId(`  ${A.toUpperCase()}\n`)).toBe(A.toUpperCase());
		expect(normalizeSessionId(`"${A}"`)).toBe(A);
		expect(normalizeSessionId(`{${A}}`)).toBe(`{${A}}`);
		expect(normalizeSessionId(A.replace(/-/g, ''))).toBe(A.replace(/-/g, ''));
	});

	it('refuses anything else', () => {
		for (const value of [
			'',
			'abc',
			`{${A}`,
			`${A}}`,
			`${A}x`,
			`${A}/../x`,
			A.slice(1),
			42,
			null,
			undefined,
			['a'],
		]) {
			expect(normalizeSessionId(value)).toBeUndefined();
		}
	});
});

describe('getSessionOutcome', () => {
	it('asks /result once and reads 202 as processing and 200 as succeeded', async () => {
		serviceRequest.mockResolvedValueOnce(answer(202)).mockResolvedValueOnce(answer(200));
		const customer = { customerId: '1002', customerIdType: 'ServiceID' as const };

		await expect(getSessionOutcome(context(), A, { itemIndex: 3, customer })).resolves.toEqual({
			sessionId: A,
			status: 'processing',
		});
		await expect(getSessionOutcome(context(), A)).resolves.toEqual({
			sessionId: A,
			status: 'succeeded',
		});

		expect(serviceRequest.mock.calls[0][1]).toEqual({
			method: 'GET',
			path: `/api/status/${A}/result`,
			responseType: 'text',
			allowStatus: expect.arrayContaining([202, 301]),
			itemIndex: 3,
			customer,
		});
	});

	it('reads a redirect as failed, with the Location resolved against the base URL', async () => {
		serviceRequest
			.mockResolvedValueOnce(answer(301, { location: 'https://elsewhere.example/e/1' }))
			.mockResolvedValueOnce(answer(301, { location: '/api/status/x/errors' }))
			.mockResolvedValueOnce(answer(301, { location: 'errors/2' }))
			.mockResolvedValueOnce(answer(301));

		const outcomes = [];
		for (let call = 0; call < 4; call++) outcomes.push(await getSessionOutcome(context(), A));

		expect(outcomes).toEqual([
			{ sessionId: A, status: 'failed', errorUrl: 'https://elsewhere.example/e/1' },
			{ sessionId: A, status: 'failed', errorUrl: 'https://service.example/api/status/x/errors' },
			{ sessionId: A, status: 'failed', errorUrl: 'https://service.example/base/errors/2' },
			{ sessionId: A, status: 'failed' },
		]);
		expect(fetchServiceUrl).not.toHaveBeenCalled();
	});

	it('fetches the error message through the transport when asked', async () => {
		serviceRequest.mockResolvedValueOnce(answer(301, { location: '/api/status/x/errors' }));
		fetchServiceUrl.mockResolvedValueOnce({
			statusCode: 200,
			headers: {},
			body: '  {"message":"bad"}\n',
		});

		const outcome = await getSessionOutcome(context(), A, {
			includeErrorMessage: true,
			itemIndex: 1,
		});

		expect(outcome).toEqual({
			sessionId: A,
			status: 'failed',
			errorUrl: 'https://service.example/api/status/x/errors',
			errorMessage: 'bad',
			errorDocument: { message: 'bad' },
			errorText: '{"message":"bad"}',
		});
		expect(fetchServiceUrl).toHaveBeenCalledWith(
			expect.anything(),
			'https://service.example/api/status/x/errors',
			1,
		);
	});

	it('keeps a text error document as text', async () => {
		serviceRequest.mockResolvedValueOnce(answer(301, { location: '/api/status/x/errors' }));
		fetchServiceUrl.mockResolvedValueOnce({
			statusCode: 200,
			headers: {},
			body: 'Line 3: unknown element <Prodct>\n',
		});

		const outcome = await getSessionOutcome(context(), A, { includeErrorMessage: true });

		expect(outcome).toEqual({
			sessionId: A,
			status: 'failed',
			errorUrl: 'https://service.example/api/status/x/errors',
			errorMessage: 'Line 3: unknown element <Prodct>',
		});
	});

	it('keeps the outcome when the error message cannot be fetched, saying why', async () => {
		serviceRequest.mockResolvedValue(answer(301, { location: '/api/status/x/errors' }));
		fetchServiceUrl.mockRejectedValue(
			new NodeApiError(
				NODE,
				{ message: 'Not found' },
				{ message: 'Not found: GET /api/status/x/errors', httpCode: '404' },
			),
		);

		const outcome = await getSessionOutcome(context(), 'x', {
			includeErrorMessage: true,
			itemIndex: 2,
		});

		expect(outcome).toEqual({
			sessionId: 'x',
			status: 'failed',
			errorUrl: 'https://service.example/api/status/x/errors',
			warning: 'The error message could not be fetched: Not found: GET /api/status/x/errors',
		});
	});

	it('still fails when the execution is cancelled while fetching the error message', async () => {
		serviceRequest.mockResolvedValue(answer(301, { location: '/api/status/x/errors' }));
		fetchServiceUrl.mockImplementation(async () => {
			abort.abort();
			throw new NodeOperationError(NODE, 'The execution was cancelled');
		});

		await expect(getSessionOutcome(context(), 'x', { includeErrorMessage: true })).rejects.toThrow(
			'The execution was cancelled',
		);
	});
});

describe('waitForSessions', () => {
	it('polls every session at once, then backs off from the initial delay up to the maximum', async () => {
		const asked = script({ [A]: [202, 202, 202, 202, 202, 200], [B]: [200] });

		const outcomes = await settle(
			waitFor([A, B], { timeoutMs: 600_000, initialDelayMs: 5_000, maxDelayMs: 12_000 }),
		);

		expect(outcomes).toEqual(
			new Map([
				[A, { sessionId: A, status: 'succeeded' }],
				[B, { sessionId: B, status: 'succeeded' }],
			]),
		);
		expect(asked[B]).toEqual([0]);
		// 5 s, 8 s, then capped at 12 s.
		expect(asked[A]).toEqual([0, 5_000, 13_000, 25_000, 37_000, 49_000]);
	});

	it('uses 5 s growing to 60 s by default', async () => {
		const asked = script({ [A]: [202] });

		await settle(waitFor([A], { timeoutMs: 200_000 }));

		const gaps = asked[A].slice(1).map((time, index) => time - asked[A][index]);
		expect(gaps.slice(0, 3)).toEqual([5_000, 8_000, 12_800]);
		expect(Math.max(...gaps)).toBeLessThanOrEqual(60_000);
		expect(gaps).toContain(60_000);
	});

	it('asks once more at the deadline and reports unfinished sessions as processing', async () => {
		const asked = script({ [A]: [202], [B]: [202, 301] });

		const outcomes = await settle(waitFor([A, B], { timeoutMs: 12_000, initialDelayMs: 5_000 }));

		expect(asked[A]).toEqual([0, 5_000, 12_000]);
		expect(outcomes.get(A)).toEqual({ sessionId: A, status: 'processing' });
		expect(outcomes.get(B)).toEqual({
			sessionId: B,
			status: 'failed',
			errorUrl: `https://service.example/errors/${B}`,
		});
	});

	it("waits for each session as long as its own item's timeout", async () => {
		const asked = script({ [A]: [202], [B]: [202] });
		const sessions = [
			{ sessionId: A, itemIndex: 0, includeErrorMessage: false, timeoutMs: 6_000 },
			{ sessionId: B, itemIndex: 1, includeErrorMessage: false, timeoutMs: 20_000 },
		];

		const outcomes = await settle(waitForSessions(context(), sessions, { initialDelayMs: 5_000 }));

		expect(asked[A]).toEqual([0, 5_000, 6_000]);
		expect(asked[B]).toEqual([0, 5_000, 6_000, 18_800, 20_000]);
		expect(outcomes).toEqual([
			{ sessionId: A, status: 'processing' },
			{ sessionId: B, status: 'processing' },
		]);
	});

	it('waits for a session named by several items as long as the longest of their timeouts', async () => {
		const asked = script({ [A]: [202, 202, 202, 200] });
		const sessions = [
			{ sessionId: A, itemIndex: 0, includeErrorMessage: false, timeoutMs: 0 },
			{ sessionId: A, itemIndex: 1, includeErrorMessage: false, timeoutMs: 60_000 },
		];

		const outcomes = await settle(waitForSessions(context(), sessions, { initialDelayMs: 5_000 }));

		expect(asked[A]).toHaveLength(4);
		expect(outcomes).toEqual([
			{ sessionId: A, status: 'succeeded' },
			{ sessionId: A, status: 'succeeded' },
		]);
	});

	it('asks every session once even with no time to wait', async () => {
		const asked = script({ [A]: [202], [B]: [200] });

		const outcomes = await settle(waitFor([A, B], { timeoutMs: 0 }));

		expect(asked).toEqual({ [A]: [0], [B]: [0] });
		expect(outcomes.get(A)).toMatchObject({ status: 'processing' });
		expect(outcomes.get(B)).toMatchObject({ status: 'succeeded' });
	});

	it('asks for each session once per round, however often it is named', async () => {
		const asked = script({ [A]: [200] });

		const outcomes = await settle(waitFor([A, A, A], { timeoutMs: 1_000 }));

		expect(asked[A]).toHaveLength(1);
		expect([...outcomes.keys()]).toEqual([A]);
	});

	it('keeps at most four polls in flight', async () => {
		let inFlight = 0;
		let most = 0;
		serviceRequest.mockImplementation(async () => {
			inFlight++;
			most = Math.max(most, inFlight);
			// A few turns of the event loop, so the other polls start while this one is in flight.
			for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
			inFlight--;
			return answer(200);
		});
		const ids = Array.from(
			{ length: 10 },
			(_, index) => `${String(index).padStart(8, '0')}-0000-4000-a000-000000000000`,
		);

		const outcomes = await settle(waitFor(ids, { timeoutMs: 1_000 }));

		expect(most).toBe(4);
		expect(serviceRequest).toHaveBeenCalledTimes(10);
		expect(
			[...outcomes.values()].every(
				(outcome) => 'status' in outcome && outcome.status === 'succeeded',
			),
		).toBe(true);
	});

	it('hands back a session whose poll failed, asked once (the transport has tried it already), and waits for the others', async () => {
		const asked = script({ [A]: [serverError(502)], [B]: [202, 200] });

		const outcomes = await settle(waitFor([A, B], { timeoutMs: 600_000 }));

		expect(outcomes.get(A)).toMatchObject({
			sessionId: A,
			error: expect.objectContaining({ httpCode: '502' }),
		});
		expect(outcomes.get(B)).toMatchObject({ status: 'succeeded' });
		expect(asked[A]).toHaveLength(1);
	});

	it('does not end the wait when an error message cannot be fetched', async () => {
		script({ [A]: [301], [B]: [202, 200] });
		fetchServiceUrl.mockRejectedValue(serverError(404));

		const outcomes = await settle(
			waitFor([A, B], { timeoutMs: 60_000, includeErrorMessage: true }),
		);

		expect(outcomes.get(A)).toMatchObject({
			status: 'failed',
			warning: expect.stringContaining('could not be fetched'),
		});
		expect(outcomes.get(B)).toMatchObject({ status: 'succeeded' });
	});

	it('asks once about a session refused for good (401), while the others finish', async () => {
		const asked = script({ [A]: [202, 200], [B]: [serverError(401)], [C]: [200] });

		const outcomes = await settle(waitFor([A, B, C], { timeoutMs: 600_000 }));

		expect(outcomes.get(B)).toMatchObject({
			sessionId: B,
			error: expect.objectContaining({ httpCode: '401' }),
		});
		expect(outcomes.get(A)).toMatchObject({ status: 'succeeded' });
		expect(outcomes.get(C)).toMatchObject({ status: 'succeeded' });
		expect(asked[B]).toHaveLength(1);
	});

	it('hands back a session the service does not know and waits for the others', async () => {
		const asked = script({ [A]: [202, 200], [B]: [serverError(404)], [C]: [200] });

		const outcomes = await settle(waitFor([A, B, C], { timeoutMs: 600_000 }));

		expect(outcomes.get(A)).toMatchObject({ status: 'succeeded' });
		expect(outcomes.get(B)).toMatchObject({
			sessionId: B,
			error: expect.objectContaining({ httpCode: '404' }),
		});
		expect(outcomes.get(C)).toMatchObject({ status: 'succeeded' });
		expect(asked[B]).toHaveLength(1);
	});

	it('ends the wait for all when the execution is cancelled during a poll', async () => {
		serviceRequest.mockImplementation(async () => {
			abort.abort();
			throw new NodeOperationError(NODE, 'The execution was cancelled');
		});

		await expect(settle(waitFor([A, B], { timeoutMs: 600_000 }))).rejects.toThrow(
			'The execution was cancelled',
		);
	});

	it('stops waiting when the execution is cancelled', async () => {
		script({ [A]: [202] });

		const waiting = waitFor([A], { timeoutMs: 600_000 });
		const outcome = waiting.catch((error: Error) => error);
		await jest.advanceTimersByTimeAsync(1_000);
		abort.abort();

		const cancelled = await outcome;
		expect(cancelled).toBeInstanceOf(NodeOperationError);
		expect((cancelled as Error).message).toBe('The execution was cancelled');
		expect(serviceRequest).toHaveBeenCalledTimes(1);
	});
});
