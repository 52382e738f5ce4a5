/**
 * The transport against a service that misbehaves the way real networks do: answers that never
 * come, Retry-After of a day or a century, a 503 that is not the rate limit.
 */
import { Readable } from 'node:stream';

import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import {
	AmbiguousUploadError,
	fetchServiceUrl,
	withPollDeadline,
} from '../../nodes/shared/transport';
import {
	pollDeadlineMs,
	pollIntervalMs,
} from '../../nodes/ProductDataIntegrationTrigger/pollTimes';
import { listUploads } from '../../nodes/shared/uploads';
import { wait } from '../../nodes/shared/transport/wait';
import { listenLocal } from '../helpers/server';
import { callService, failure, postControl } from '../helpers/service';
import { startEmulator } from '../../scripts/emulator';
import { createContext, createPollContext } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';

const XML =
	'<?xml version="1.0" encoding="UTF-8"?><products><product><sku>A-1</sku></product></products>';
const FIFTEEN_MINUTES = 15 * 60_000;

// Timeouts of a second, retried with backoff: generous, on a machine shared with other work.
jest.setTimeout(30_000);

const { emulator: service, credentials } = useEmulator(FAST_BUCKET);

function fault(rule: Record<string, unknown>): Promise<void> {
	return postControl(service.url, 'faults', rule);
}

/** Collects the process warnings emitted while `run` runs (a timer overflow is one). */
async function warningsDuring(run: () => Promise<void>): Promise<string[]> {
	const seen: string[] = [];
	const listener = (warning: Error) => seen.push(warning.name);
	process.on('warning', listener);
	try {
		await run();
		// Warnings are emitted on the next tick.
		await new Promise((resolve) => setImmediate(resolve));
	} finally {
		process.off('warning', listener);
	}
	return seen;
}

describe('a request that never gets an answer', () => {
	it('a GET ends at the Request Timeout and is tried again', async () => {
		await fault({ count: 1, kind: 'hang', path: '/api/auth/me' });
		const context = createContext({ credentials: credentials({ requestTimeoutSeconds: 1 }) });
		const response = await callService(context, { method: 'GET', path: '/api/auth/me' });
		expect(response.statusCode).toBe(200);
		expect(service.stats().requests['GET /api/auth/me']).toBe(2);
	});

	it('an upload that times out is ambiguous: not sent again, and says so', async () => {
		await fault({ count: 1, kind: 'hang', path: '/api/xml' });
		const context = createContext({ credentials: credentials({ requestTimeoutSeconds: 1 }) });
		const error = await failure(
			callService(context, {
				method: 'PUT',
				path: '/api/xml',
				body: XML,
				headers: { 'Content-Type': 'application/xml' },
				itemIndex: 2,
			}),
		);
		expect(error.message).toBe(
			"No answer to PUT /api/xml within 1 s (the credential's Request Timeout): the service may or may not have received it",
		);
		expect(error.description).toMatch(/not sent again automatically/);
		expect(error).toBeInstanceOf(AmbiguousUploadError);
		expect(error.context).toEqual(expect.objectContaining({ itemIndex: 2 }));
		expect(service.stats().requests['PUT /api/xml']).toBe(1);
		// The emulator stored it: a blind retry would have made a duplicate.
		expect(service.uploads()).toHaveLength(1);
	});

	it('a streamed upload that times out says so, not that the connection broke', async () => {
		await fault({ count: 1, kind: 'hang', path: '/api/xml' });
		const context = createContext({ credentials: credentials({ requestTimeoutSeconds: 1 }) });
		const body = Readable.from([Buffer.from(XML)]);
		const error = await failure(
			callService(context, {
				method: 'PUT',
				path: '/api/xml',
				body,
				headers: { 'Content-Type': 'application/xml' },
			}),
		);
		expect(error.message).toBe(
			"No answer to PUT /api/xml within 1 s (the credential's Request Timeout): the service may or may not have received it",
		);
		expect(error).toBeInstanceOf(AmbiguousUploadError);
	});

	it('a GET that never gets an answer fails after its bounded attempts, naming the timeout', async () => {
		await fault({ count: 3, kind: 'hang', path: '/api/auth/me' });
		const context = createContext({ credentials: credentials({ requestTimeoutSeconds: 1 }) });
		const error = await failure(callService(context, { method: 'GET', path: '/api/auth/me' }));
		expect(error.message).toMatch(/GET \/api\/auth\/me failed: no answer within 1 s/);
		expect(service.stats().requests['GET /api/auth/me']).toBe(3);
	});
});

describe('a Retry-After longer than an execution waits', () => {
	it.each([
		['a day in seconds', '86400', /wait 24 h before GET \/api\/auth\/me/],
		['2^31 ms and more', '2592000', /wait 30 days/],
		['an HTTP date in 2100', 'Fri, 01 Jan 2100 00:00:00 GMT', /wait \d+ days/],
	])(
		'%s fails that request with the time, does not hold the account back, overflows no timer',
		async (_name, retryAfter, message) => {
			// Its own emulator: a new address is a new account, whose penalty no other test inherits.
			const own = await startEmulator(FAST_BUCKET);
			const ownCredentials = () => credentials({ baseUrl: own.url });
			try {
				const warnings = await warningsDuring(async () => {
					await postControl(own.url, 'faults', {
						count: 1,
						kind: '429',
						retryAfter,
						path: '/api/auth/me',
					});
					const error = await failure(
						callService(createContext({ credentials: ownCredentials() }), {
							method: 'GET',
							path: '/api/auth/me',
						}),
					);
					expect(error.message).toMatch(message);
					expect(error.description).toMatch(/waits at most 15 min/);
					expect(own.stats().requests['GET /api/auth/me']).toBe(1);
					// The account's next request waits as after a refusal without Retry-After (the bucket
					// counted full: 50 x 50 ms at most), not the 15 minutes the refused one could not wait.
					const next = createContext({ credentials: ownCredentials() });
					const started = Date.now();
					expect(
						(await callService(next, { method: 'GET', path: '/api/auth/me' })).statusCode,
					).toBe(200);
					expect(Date.now() - started).toBeLessThan(FIFTEEN_MINUTES / 100);
					const expected = next.logged.flatMap((line) => {
						const found = /Waiting for the request rate limit.*"expectedWaitMs":(\d+)/.exec(line);
						return found ? [Number(found[1])] : [];
					});
					for (const waitMs of expected) expect(waitMs).toBeLessThanOrEqual(2500);
				});
				expect(warnings).not.toContain('TimeoutOverflowWarning');
			} finally {
				await own.close();
			}
		},
	);
});

describe('a 503 that is not the rate limit', () => {
	it('a GET is retried as a failure of the service and reported as unavailable, not as the rate limit', async () => {
		await fault({ count: 10, kind: '503', path: '/api/auth/me' });
		const context = createContext({ credentials: credentials() });
		const error = await failure(callService(context, { method: 'GET', path: '/api/auth/me' }));
		expect(error.message).toBe('The service is temporarily unavailable.');
		expect(error.message).not.toMatch(/request limit/);
		expect(error.httpCode).toBe('503');
		expect(service.stats().requests['GET /api/auth/me']).toBe(3);
	});

	it('an upload is not sent again and is reported as the service being unavailable', async () => {
		await fault({ count: 1, kind: '503', path: '/api/xml' });
		const context = createContext({ credentials: credentials() });
		const error = await failure(
			callService(context, {
				method: 'PUT',
				path: '/api/xml',
				body: XML,
				headers: { 'Content-Type': 'application/xml' },
			}),
		);
		expect(error.message).toBe(
			'The service was unavailable (503) for PUT /api/xml: it may or may not have received it',
		);
		expect(service.stats().requests['PUT /api/xml']).toBe(1);
	});
});

describe('waits', () => {
	it('a wait beyond what one timer holds is cancellable and overflows no timer', async () => {
		const controller = new AbortController();
		const warnings = await warningsDuring(async () => {
			const pending = wait(2 ** 31 + 1000, controller.signal).then(
				() => 'done',
				() => 'cancelled',
			);
			await wait(20);
			controller.abort();
			expect(await pending).toBe('cancelled');
		});
		expect(warnings).not.toContain('TimeoutOverflowWarning');
	});
});

describe('a poll held up by the network', () => {
	const pollContext = (overrides: ICredentialDataDecryptedObject = {}) =>
		createPollContext({ credentials: credentials(overrides) });

	it('ends at its deadline, says so in the log, and the next poll on the same context works', async () => {
		await fault({ count: 1, kind: 'hang', path: '/api/xml/' });
		const context = pollContext({ requestTimeoutSeconds: 600 });
		const list = async () =>
			await callService(context, { method: 'GET', path: '/api/xml/2025-03-10' });
		const error = await failure(withPollDeadline(context, 1000, list));
		expect(error.message).toMatch(/^The poll was stopped after 1 s, its time budget/);
		expect(
			context.logged.filter((line) => line.startsWith('warn The poll was stopped')),
		).toHaveLength(1);
		const next = await withPollDeadline(context, 5000, list);
		expect(next.statusCode).toBe(200);
		expect(context.logged.filter((line) => line.startsWith('warn'))).toHaveLength(1);
	});

	it("ends before the next poll is due, within n8n's budget", () => {
		const every = (item: Record<string, unknown>) => ({ item: [item] });
		expect(pollIntervalMs(every({ mode: 'everyMinute' }))).toBe(60_000);
		expect(pollIntervalMs(every({ mode: 'everyX', value: 5, unit: 'minutes' }))).toBe(300_000);
		expect(pollIntervalMs(every({ mode: 'everyX', value: 2, unit: 'hours' }))).toBe(7_200_000);
		expect(pollIntervalMs({ item: [{ mode: 'everyHour' }, { mode: 'everyMinute' }] })).toBe(60_000);
		expect(
			pollIntervalMs(every({ mode: 'custom', cronExpression: '*/10 * * * * *' })),
		).toBeUndefined();
		expect(pollIntervalMs({})).toBeUndefined();
		expect(pollDeadlineMs(300_000, every({ mode: 'everyMinute' }))).toBe(55_000);
		expect(pollDeadlineMs(300_000, every({ mode: 'everyHour' }))).toBe(300_000);
		expect(pollDeadlineMs(300_000, every({ mode: 'custom', cronExpression: '* * * * *' }))).toBe(
			300_000,
		);
	});
});

describe('answers of any size', () => {
	const MiB = 1024 * 1024;

	it('an answer of 256 MiB is read up to its limit, and the rest of it is never sent', async () => {
		// A server that would send 256 MiB, counting what it could write before the client hung up.
		let written = 0;
		let closed: () => void = () => undefined;
		const done = new Promise<void>((resolve) => {
			closed = resolve;
		});
		const huge = await listenLocal((_req, res) => {
			res.writeHead(200, { 'content-type': 'text/plain' });
			const chunk = Buffer.alloc(64 * 1024, 'x');
			const pump = () => {
				while (written < 256 * MiB) {
					written += chunk.length;
					if (!res.write(chunk)) return void res.once('drain', pump);
				}
				res.end();
			};
			res.on('close', () => closed());
			pump();
		});
		try {
			const context = createContext({ credentials: credentials({ baseUrl: huge.url }) });
			const document = await fetchServiceUrl(context, `${huge.url}/doc`, 0);
			expect(document.truncated).toBe(true);
			expect(document.body.length).toBeLessThan(MiB + 100);
			await done;
			// What the server could push into socket buffers before the client closed: far from all.
			expect(written).toBeLessThan(64 * MiB);
		} finally {
			await huge.close();
		}
	});

	it('an error document beyond 1 MiB is cut, and says so', async () => {
		await fault({ count: 1, kind: 'huge', bytes: 3 * MiB, path: '/errors/' });
		const context = createContext({ credentials: credentials() });
		const document = await fetchServiceUrl(context, '/errors/1', 0);
		expect(document.body.length).toBeLessThan(MiB + 100);
		expect(document.body).toMatch(/\[truncated: longer than 1 MiB, the rest was not read\]$/);
	});

	it('a GET answered with more than its limit fails without retrying, naming the limit', async () => {
		await fault({ count: 1, kind: 'huge', bytes: 2 * MiB, path: '/api/auth/me' });
		const context = createContext({ credentials: credentials() });
		const error = await failure(
			callService(context, { method: 'GET', path: '/api/auth/me', itemIndex: 1 }),
		);
		expect(error.message).toBe(
			'The service answered GET /api/auth/me with more than 1 MiB, more than this request reads',
		);
		expect(service.stats().requests['GET /api/auth/me']).toBe(1);
	});

	it('an upload answered with more than its limit is ambiguous', async () => {
		await fault({ count: 1, kind: 'huge', status: 202, bytes: 2 * MiB, path: '/api/xml' });
		const context = createContext({ credentials: credentials() });
		const error = await failure(
			callService(context, {
				method: 'PUT',
				path: '/api/xml',
				body: XML,
				headers: { 'Content-Type': 'application/xml' },
			}),
		);
		expect(error.message).toBe(
			'The service answered PUT /api/xml with more than 1 MiB, more than this request reads',
		);
		expect(error.description).toMatch(/not sent again automatically/);
	});

	it('a list of uploads is read up to 32 MiB', async () => {
		await fault({ count: 1, kind: 'huge', bytes: 33 * MiB, path: '/api/xml/' });
		const context = createContext({ credentials: credentials() });
		const error = await failure(listUploads(context, '2025-03-10'));
		expect(error.message).toBe(
			'The service answered GET /api/xml/2025-03-10 with more than 32 MiB, more than this request reads',
		);
	});
});

describe('item values that reach headers and paths', () => {
	it.each([
		[
			'a service ID with a sign a header cannot carry',
			{ customerId: '41001€', customerIdType: 'ServiceID' },
			'The customer ID of item 3 is not a service ID: "41001€"',
		],
		[
			'a service ID that is not a number',
			{ customerId: 'SHOP-NORTH', customerIdType: 'ServiceID' },
			'The customer ID of item 3 is not a service ID: "SHOP-NORTH"',
		],
		[
			'an external ID outside Latin-1',
			{ customerId: 'Nord€', customerIdType: 'ExternalID' },
			'The customer ID of item 3 cannot be sent: "Nord€"',
		],
		[
			'an external ID with a line break',
			{ customerId: 'SHOP\r\nX-Evil: 1', customerIdType: 'ExternalID' },
			'The customer ID of item 3 cannot be sent: "SHOP\r\nX-Evil: 1"',
		],
	] as const)('%s fails its item before any request', async (_name, customer, message) => {
		const context = createContext({ credentials: credentials() });
		const error = await failure(
			callService(context, {
				method: 'GET',
				path: '/api/auth/me',
				customer: { ...customer },
				itemIndex: 3,
			}),
		);
		expect(error.message).toBe(message);
		expect(error.context).toEqual(expect.objectContaining({ itemIndex: 3 }));
		expect(service.stats().requests).toEqual({});
	});

	it("a credential's customer ID is checked the same way", async () => {
		const context = createContext({ credentials: credentials({ customerId: '1001x' }) });
		const error = await failure(callService(context, { method: 'GET', path: '/api/auth/me' }));
		expect(error.message).toBe('The credential\'s Customer ID is not a service ID: "1001x"');
		expect(service.stats().requests).toEqual({});
	});

	it.each(['..', '.', '%2e%2E', '%2e'])(
		'a path segment %s is refused before any request',
		async (segment) => {
			const context = createContext({ credentials: credentials() });
			const error = await failure(
				callService(context, { method: 'HEAD', path: `/api/images/${segment}`, itemIndex: 0 }),
			);
			expect(error.message).toBe(
				`The value "${segment}" of item 0 cannot be used in a request path`,
			);
			expect(service.stats().requests).toEqual({});
		},
	);

	it('a header value with a line break is refused before any request', async () => {
		const context = createContext({ credentials: credentials() });
		const error = await failure(
			callService(context, {
				method: 'PUT',
				path: '/api/xml',
				body: XML,
				headers: { 'Content-Type': 'application/xml\r\nX-Evil: 1' },
				itemIndex: 1,
			}),
		);
		expect(error.message).toMatch(
			/^The Content-Type header of item 1 holds characters a header cannot carry/,
		);
		expect(service.stats().requests).toEqual({});
	});
});
