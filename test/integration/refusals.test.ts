/**
 * What an answer that is no success means for the request, as the transport reads it: a refusal
 * that asks to come back (429, or 503 with Retry-After, whatever its words) was not handled and is
 * sent again, an upload too; a failure after which an upload may have been stored is not.
 */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { getSessionOutcome } from '../../nodes/shared/sessions';
import {
	AmbiguousUploadError,
	fetchServiceUrl,
	type ServiceResponse,
} from '../../nodes/shared/transport';
import { DEFAULT_ACCOUNT } from '../../scripts/emulator';
import { createContext, emulatorCredentials, type TestContext } from '../../scripts/n8n/in-process';
import { customRateLimit, startedEmulators } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';
import { callService, failure, postControl } from '../helpers/service';

const SESSION = '11111111-1111-4111-a111-111111111111';
const XML =
	'<?xml version="1.0" encoding="UTF-8"?><products><product><sku>A-1</sku></product></products>';

jest.setTimeout(30_000);

/** The account's own limit terms, fast enough for tests. */
function credentialsFor(
	url: string,
	intervalMs: number,
	capacity = 50,
): ICredentialDataDecryptedObject {
	return emulatorCredentials(
		{ url },
		customRateLimit({ bucketCapacity: capacity, leakIntervalMs: intervalMs }),
	);
}

// Each test its own service: a new address is a new account, whose penalties no other test inherits.
const emulator = startedEmulators();
const opened: LocalServer[] = [];

/** A service that gives every request the same answer, and records when each arrived. */
async function answering(
	status: number,
	headers: Record<string, string> = {},
): Promise<LocalServer & { arrivals: number[] }> {
	const arrivals: number[] = [];
	const server = await listenLocal((req, res) => {
		arrivals.push(Date.now());
		req.resume();
		req.on('end', () => {
			res.writeHead(status, { 'content-type': 'application/json', ...headers });
			res.end('{"message":"The service is temporarily unavailable."}');
		});
	});
	opened.push(server);
	return { ...server, arrivals };
}

afterAll(async () => {
	await Promise.all(opened.map((server) => server.close()));
});

async function upload(context: TestContext): Promise<ServiceResponse> {
	return await callService(context, {
		method: 'PUT',
		path: '/api/xml',
		body: XML,
		headers: { 'Content-Type': 'application/xml' },
	});
}

describe('a refusal that asks to come back: not handled, sent again', () => {
	it('a 503 with Retry-After that says "temporarily unavailable": the upload is sent again and stored once', async () => {
		const service = await emulator({ leakIntervalMs: 50 });
		await postControl(service.url, 'faults', {
			count: 2,
			kind: '503',
			retryAfter: '0',
			path: '/api/xml',
		});
		const response = await upload(createContext({ credentials: credentialsFor(service.url, 50) }));
		expect(response.statusCode).toBe(202);
		expect(service.stats().requests['PUT /api/xml']).toBe(3);
		expect(service.uploads()).toHaveLength(1);
	});

	it("a 503 with Retry-After in other words (the full bucket's): the upload is sent again and stored once", async () => {
		const service = await emulator({ leakIntervalMs: 2000, rateLimitAnswer: '503' });
		await postControl(service.url, 'bucket', { username: DEFAULT_ACCOUNT.username, level: 50 });
		const response = await upload(
			createContext({ credentials: credentialsFor(service.url, 2000) }),
		);
		expect(response.statusCode).toBe(202);
		expect(service.stats().rejected429).toBeGreaterThanOrEqual(1);
		expect(service.uploads()).toHaveLength(1);
	});

	it('a 503 with Retry-After that keeps coming fails as a refusal, not as an upload that may have arrived', async () => {
		// Terms of 2 requests, then one per 100 ms: 6 tries, at least 100 ms apart, outlast the 400 ms
		// the bucket takes to drain twice.
		const service = await emulator({ bucketCapacity: 2, leakIntervalMs: 100 });
		await postControl(service.url, 'faults', {
			count: 1000,
			kind: '503',
			retryAfter: '0',
			path: '/api/xml',
		});
		const error = await failure(
			upload(createContext({ credentials: credentialsFor(service.url, 100, 2) })),
		);
		expect(error.message).toBe(
			'The service was unavailable: PUT /api/xml was refused 6 times (503)',
		);
		expect(error.description).toMatch(/^Nothing was stored/);
		expect(error).not.toBeInstanceOf(AmbiguousUploadError);
		expect(service.stats().requests['PUT /api/xml']).toBe(6);
	});
});

describe('refusals with long waits', () => {
	it('Retry-After of 10 minutes, twice: the request fails once its refusals would outlast 15 minutes', async () => {
		// Time is the fake clock's: the limiter's and the transport's waits pass at once, the
		// exchanges are real.
		jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
		try {
			const server = await answering(429, { 'retry-after': '600' });
			const context = createContext({ credentials: credentialsFor(server.url, 100, 2) });
			let settled = false;
			const pending = failure(
				callService(context, { method: 'GET', path: '/api/auth/me' }),
			).finally(() => (settled = true));
			for (let step = 0; step < 100_000 && !settled; step++) {
				await jest.advanceTimersByTimeAsync(step % 10 === 0 ? 1000 : 0);
				await new Promise((resolve) => setImmediate(resolve));
			}
			const error = await pending;
			expect(error.message).toBe(
				"The service's request limit was reached and it asks to wait 10 min before GET /api/auth/me is sent again",
			);
			expect(error.description).toMatch(
				/^An execution waits at most 15 min for the service\. This request has been refused for 10 min already\./,
			);
			expect(server.arrivals).toHaveLength(2);
		} finally {
			jest.useRealTimers();
		}
	});

	it("Retry-After of a day: the refused request fails, the account's next request is not held back", async () => {
		let refused = false;
		const server = await listenLocal((req, res) => {
			req.resume();
			req.on('end', () => {
				if (!refused) {
					refused = true;
					res.writeHead(429, { 'retry-after': '86400' }).end();
				} else {
					res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
				}
			});
		});
		opened.push(server);
		const controller = new AbortController();
		const context = createContext({
			credentials: credentialsFor(server.url, 100, 2),
			signal: controller.signal,
		});
		const error = await failure(callService(context, { method: 'GET', path: '/api/auth/me' }));
		expect(error.message).toBe(
			"The service's request limit was reached and it asks to wait 24 h before GET /api/auth/me is sent again",
		);

		const started = Date.now();
		const next = callService(context, { method: 'GET', path: '/api/auth/me' }).then(
			(response) => response.statusCode,
			(failed: Error) => failed.message,
		);
		let timer: NodeJS.Timeout | undefined;
		const outcome = await Promise.race([
			next,
			new Promise(
				(resolve) => (timer = setTimeout(() => resolve('still waiting after 5 s'), 5000)),
			),
		]);
		clearTimeout(timer);
		controller.abort();
		await next;
		expect(outcome).toBe(200);
		expect(Date.now() - started).toBeLessThan(5000);
	});
});

describe('an answer after which the upload may have been stored: not sent again', () => {
	it.each([500, 502, 504, 503])('%s (a 503 without Retry-After)', async (status) => {
		const server = await answering(status);
		const error = await failure(
			upload(createContext({ credentials: credentialsFor(server.url, 50) })),
		);
		expect(error.message).toMatch(/: it may or may not have received it$/);
		expect(error.description).toMatch(/not sent again automatically/);
		expect(error).toBeInstanceOf(AmbiguousUploadError);
		// n8n tells its node errors apart by name.
		expect(error.name).toBe('NodeApiError');
		expect(server.arrivals).toHaveLength(1);
	});
});

describe('a URL the service names', () => {
	it('on another host that refuses for good: a bounded number of requests, the session keeps its outcome and its URL, with a warning', async () => {
		const elsewhere = await answering(429, { 'retry-after': '0' });
		const service = await listenLocal((req, res) => {
			req.resume();
			res.writeHead(301, { location: `${elsewhere.url}/errors/1` });
			res.end();
		});
		opened.push(service);
		const context = createContext({
			credentials: credentialsFor(service.url, 50, 2),
			nodeParameters: { options: { allowedInternalHosts: new URL(elsewhere.url).host } },
		});
		const outcome = await getSessionOutcome(context, SESSION, {
			includeErrorMessage: true,
			itemIndex: 0,
		});
		// Another host is asked once: its refusals are not the account's, and nothing is retried there.
		expect(outcome).toEqual({
			sessionId: SESSION,
			status: 'failed',
			errorUrl: `${elsewhere.url}/errors/1`,
			warning: `The error message could not be fetched: GET /errors/1 on ${new URL(elsewhere.url).host} answered with status 429`,
		});
		expect(elsewhere.arrivals).toHaveLength(1);
	});

	it('answered 429 with Retry-After: 0 forever: a bounded number of requests, never closer than the floor', async () => {
		// Terms of 2 requests, then one per 100 ms: the floor after a refusal is one interval (100 ms).
		const server = await answering(429, { 'retry-after': '0' });
		const context = createContext({ credentials: credentialsFor(server.url, 100, 2) });
		const error = await failure(fetchServiceUrl(context, `${server.url}/api/status/x/errors`, 0));
		expect(error.message).toBe(
			"The service's request limit was reached: GET /api/status/x/errors was refused 6 times (429)",
		);
		expect(server.arrivals).toHaveLength(6);
		const gaps = server.arrivals.slice(1).map((at, index) => at - server.arrivals[index]);
		// Half the floor: two requests may travel at different speeds on a busy machine.
		for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(50);
	});
});
