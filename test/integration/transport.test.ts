import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { inspect } from 'node:util';

import type { ICredentialDataDecryptedObject, IPollFunctions } from 'n8n-workflow';

import {
	checkBaseUrl,
	fetchServiceUrl,
	type ServiceRequest,
	type ServiceResponse,
	withPollDeadline,
} from '../../nodes/shared/transport';
import { makeCertificates } from '../../scripts/certificates';
import {
	DEFAULT_ACCOUNT,
	MESSAGES,
	type Emulator,
	type EmulatorOptions,
} from '../../scripts/emulator';
import {
	createContext,
	createPollContext,
	emulatorCredentials,
	type TestContext,
} from '../../scripts/n8n/in-process';
import { customRateLimit, startedEmulators, useEmulator } from '../helpers/emulator';
import { listenLocal } from '../helpers/server';
import { callService, failure, postControl } from '../helpers/service';

const PASSWORD = DEFAULT_ACCOUNT.password;
const BASIC = Buffer.from(`${DEFAULT_ACCOUNT.username}:${PASSWORD}`).toString('base64');
const XML =
	'<?xml version="1.0" encoding="UTF-8"?><products><product><sku>A-1</sku></product></products>';

function credentialsFor(
	url: string,
	overrides: ICredentialDataDecryptedObject = {},
): ICredentialDataDecryptedObject {
	return emulatorCredentials({ url }, overrides);
}

/** The account's own limit terms, fast enough for tests. */
function fastTerms(intervalMs: number, capacity = 50): ICredentialDataDecryptedObject {
	return customRateLimit({ bucketCapacity: capacity, leakIntervalMs: intervalMs });
}

/** Everything an error shows or stores: message, description, JSON form and a deep inspection. */
function renderError(error: Error & Record<string, unknown>): string {
	return [
		error.message,
		String(error.description ?? ''),
		JSON.stringify(error),
		inspect(error, { depth: 10, showHidden: true }),
	].join('\n');
}

/** An XML upload read as text, the session id it answers with; `extra` adds to the request. */
async function uploadXml(
	context: TestContext,
	body: ServiceRequest['body'],
	extra: Partial<ServiceRequest> = {},
): Promise<ServiceResponse<string>> {
	return await callService<string>(context, {
		method: 'PUT',
		path: '/api/xml',
		body,
		headers: { 'Content-Type': 'application/xml' },
		responseType: 'text',
		...extra,
	});
}

function expectNoSecrets(text: string): void {
	expect(text).not.toContain(PASSWORD);
	expect(text).not.toContain(BASIC);
	expect(text.toLowerCase()).not.toContain('authorization: basic');
}

/** A bare HTTP server that records what reached it. */
async function startCapture(
	reply: (headers: IncomingHttpHeaders) => { status: number; body: string },
) {
	const seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }> = [];
	const server = await listenLocal((req, res) => {
		seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
		req.resume();
		req.on('end', () => {
			const { status, body } = reply(req.headers);
			res.writeHead(status, { 'content-type': 'text/plain' });
			res.end(body);
		});
	});
	return { ...server, seen };
}

/** One poll of a trigger, with a deadline as the trigger's polls have. */
async function poll<T>(trigger: IPollFunctions, run: () => Promise<T>): Promise<T> {
	return await withPollDeadline(trigger, 60_000, run);
}

const emulator = startedEmulators();

describe('base URL', () => {
	it('accepts https anywhere and http only to this machine', () => {
		expect(checkBaseUrl('https://svc.example.com/')).toBe('https://svc.example.com');
		expect(checkBaseUrl(' https://svc.example.com/prefix// ')).toBe(
			'https://svc.example.com/prefix',
		);
		expect(checkBaseUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
		expect(checkBaseUrl('http://127.8.9.10')).toBe('http://127.8.9.10');
		expect(checkBaseUrl('http://localhost:3000')).toBe('http://localhost:3000');
		expect(checkBaseUrl('http://[::1]:3000')).toBe('http://[::1]:3000');
		expect(() => checkBaseUrl('http://svc.example.com')).toThrow(/must start with https:\/\//);
		expect(() => checkBaseUrl('http://10.0.0.1')).toThrow(/must start with https:\/\//);
		expect(() => checkBaseUrl('http://localhost.example.com')).toThrow(
			/must start with https:\/\//,
		);
		// Plain http hidden behind characters the URL parser drops.
		for (const hidden of [
			'\u0001http://svc.example.com',
			'ht\ttp://svc.example.com',
			'http\n://svc.example.com',
			'h\rttp://svc.example.com',
		]) {
			expect(() => checkBaseUrl(hidden)).toThrow(/must start with https:\/\//);
		}
		expect(() => checkBaseUrl('ftp://svc.example.com')).toThrow(/https:\/\//);
		expect(() => checkBaseUrl('svc.example.com')).toThrow(/not a valid URL/);
		expect(() => checkBaseUrl('')).toThrow(/empty/);
		expect(() => checkBaseUrl('https://user:secret@svc.example.com')).toThrow(
			/must not contain a username/,
		);
	});

	it('an http base URL to another machine is refused before any request is made', async () => {
		const context = createContext({ credentials: credentialsFor('http://svc.example.com') });
		const sent = jest.spyOn(context.helpers, 'httpRequestWithAuthentication');
		const error = await failure(
			callService(context, { method: 'GET', path: '/api/auth/me', itemIndex: 2 }),
		);
		expect(error.message).toMatch(/must start with https:\/\//);
		expect(error.context).toEqual(expect.objectContaining({ itemIndex: 2 }));
		expect(sent).not.toHaveBeenCalled();
		expectNoSecrets(renderError(error));
	});
});

describe('requests against the emulator', () => {
	const { emulator: service } = useEmulator();

	it('authenticates with the credential and parses JSON', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		const response = await callService<{ userName: string }>(context, {
			method: 'GET',
			path: '/api/auth/me',
		});
		expect(response.statusCode).toBe(200);
		expect(response.body.userName).toBe(DEFAULT_ACCOUNT.username);
		expect(response.headers['content-type']).toMatch(/json/);
	});

	it('reads the credential once per node run, and once per poll of a trigger, whose context n8n keeps', async () => {
		const credentials = credentialsFor(service.url);
		const run = createContext({ credentials });
		const reads = jest.spyOn(run, 'getCredentials');
		await callService(run, { method: 'GET', path: '/api/auth/me' });
		await callService(run, { method: 'GET', path: '/api/auth/me' });
		expect(reads).toHaveBeenCalledTimes(1);

		// n8n hands every poll of an active trigger the same context; the credential may be edited between polls.
		const trigger = createPollContext({ credentials });
		const triggerReads = jest.spyOn(trigger, 'getCredentials');
		await poll(trigger, async () => {
			await callService(trigger, { method: 'GET', path: '/api/auth/me' });
			await callService(trigger, { method: 'GET', path: '/api/auth/me' });
		});
		expect(triggerReads).toHaveBeenCalledTimes(1);
		credentials.password = 'edited-password';
		const error = await failure(
			poll(
				trigger,
				async () => await callService(trigger, { method: 'GET', path: '/api/auth/me' }),
			),
		);
		expect(error.httpCode).toBe('401');
		expect(triggerReads).toHaveBeenCalledTimes(2);
	});

	it('sends the credential customer, or the override instead', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		const plain = await uploadXml(context, XML);
		const overridden = await uploadXml(context, Buffer.from(XML), {
			customer: { customerId: 'SHOP-SOUTH', customerIdType: 'ExternalID' },
		});
		expect(plain.statusCode).toBe(202);
		expect(overridden.statusCode).toBe(202);
		const uploads = service.uploads();
		expect(uploads.find((u) => u.id === plain.body.trim())?.customerServiceId).toBe(1001);
		expect(uploads.find((u) => u.id === overridden.body.trim())?.customerServiceId).toBe(1002);
	});

	it('401: the service message, a hint, the item, and no secret', async () => {
		const context = createContext({
			credentials: credentialsFor(service.url, { password: 'wrong-password' }),
		});
		const error = await failure(
			callService(context, { method: 'GET', path: '/api/auth/me', itemIndex: 3 }),
		);
		expect(error.message).toBe(MESSAGES.denied);
		expect(error.description).toMatch(/username and password/);
		expect(error.description).toMatch(/customer ID/i);
		expect(error.httpCode).toBe('401');
		expect(error.context).toEqual(expect.objectContaining({ itemIndex: 3 }));
		const rendered = renderError(error);
		expect(rendered).not.toContain('wrong-password');
		expect(rendered).not.toContain(
			Buffer.from(`${DEFAULT_ACCOUNT.username}:wrong-password`).toString('base64'),
		);
	});

	it('401: the hint names the environment the credential is for', async () => {
		const production = createContext({
			credentials: credentialsFor(service.url, { password: 'wrong-password' }),
		});
		const test = createContext({
			credentials: credentialsFor(service.url, { password: 'wrong-password', environment: 'test' }),
		});
		const onProduction = await failure(
			callService(production, { method: 'GET', path: '/api/auth/me' }),
		);
		const onTest = await failure(callService(test, { method: 'GET', path: '/api/auth/me' }));
		expect(onProduction.description).toMatch(/issued for the Production environment/);
		expect(onTest.description).toMatch(/issued for the Development\/Test environment/);
	});

	it('401 for a customer the user may not act on', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		const error = await failure(
			callService(context, {
				method: 'GET',
				path: '/api/xml/2025-01-01',
				customer: { customerId: '999999', customerIdType: 'ServiceID' },
			}),
		);
		expect(error.httpCode).toBe('401');
		expectNoSecrets(renderError(error));
	});

	describe('401: one check of the credential’s own login names the likely cause', () => {
		const authMe = () => service.stats().requests['GET /api/auth/me'] ?? 0;

		it('the customer node, when the login works', async () => {
			const context = createContext({ credentials: credentialsFor(service.url) });
			const before = authMe();
			const error = await failure(
				callService(context, {
					method: 'GET',
					path: '/api/xml/2025-01-01',
					customer: { customerId: 'SHOP-NOWHERE', customerIdType: 'ExternalID' },
				}),
			);
			expect(error.httpCode).toBe('401');
			expect(error.description).toBe(
				"The login works (the credential's own customer is accepted), so the service refused the customer node ExternalID SHOP-NOWHERE: check the node's Customer option. A service ID is the number the service gave the node; your own ID of it is an external ID.",
			);
			expect(authMe() - before).toBe(1);
		});

		it('the login and the credential’s customer, when the credential’s customer is refused', async () => {
			// The check goes with the credential's own customer: when that is the wrong one, the check
			// fails as well, and the hint names both.
			// (A service ID the account does not have: one that is not a number is refused before any request.)
			const context = createContext({
				credentials: credentialsFor(service.url, {
					customerId: '4242',
					customerIdType: 'ServiceID',
				}),
			});
			const error = await failure(
				callService(context, { method: 'GET', path: '/api/xml/2025-01-01' }),
			);
			expect(error.description).toMatch(/^The credential's login is refused as well/);
			expect(error.description).toMatch(/Customer ID and its type/);
		});

		it('the login, when the check is refused too; no check for a refused check', async () => {
			const context = createContext({
				credentials: credentialsFor(service.url, { password: 'wrong-password' }),
			});
			const before = authMe();
			const error = await failure(
				callService(context, { method: 'GET', path: '/api/xml/2025-01-01' }),
			);
			expect(error.description).toMatch(
				/^The credential's login is refused as well \(GET \/api\/auth\/me with its own customer\): check that the username and password are the ones issued for the Production environment/,
			);
			expect(authMe() - before).toBe(1);

			const again = await failure(
				callService(context, { method: 'GET', path: '/api/xml/2025-01-02' }),
			);
			expect(again.description).toBe(error.description);
			// Once per node run, however many requests are refused.
			expect(authMe() - before).toBe(1);

			const onCheck = await failure(
				callService(
					createContext({
						credentials: credentialsFor(service.url, { password: 'wrong-password' }),
					}),
					{ method: 'GET', path: '/api/auth/me' },
				),
			);
			expect(onCheck.description).toMatch(/^The credential's login is refused as well/);
			expect(authMe() - before).toBe(2);
			expectNoSecrets(renderError(error));
		});

		it('once per poll in a trigger, whose credential may be mended between polls', async () => {
			const trigger = createPollContext({
				credentials: credentialsFor(service.url, { password: 'wrong-password' }),
			});
			const before = authMe();
			const refusedTwice = async () => {
				for (const day of ['2025-01-01', '2025-01-02']) {
					const error = await failure(
						callService(trigger, { method: 'GET', path: `/api/xml/${day}` }),
					);
					expect(error.description).toMatch(/^The credential's login is refused as well/);
				}
			};
			await poll(trigger, refusedTwice);
			expect(authMe() - before).toBe(1);
			await poll(trigger, refusedTwice);
			expect(authMe() - before).toBe(2);
		});
	});

	it('400: the service message', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		const error = await failure(
			callService(context, { method: 'GET', path: '/api/xml/not-a-date', itemIndex: 0 }),
		);
		expect(error.message).toBe(MESSAGES.invalid);
		expect(error.httpCode).toBe('400');
		expect(error.context).toEqual(expect.objectContaining({ itemIndex: 0 }));
	});

	it('404 is handed back when allowed and thrown otherwise', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		const allowed = await callService(context, {
			method: 'HEAD',
			path: '/api/images/unknown-hashcode',
			allowStatus: [404],
			responseType: 'none',
		});
		expect(allowed.statusCode).toBe(404);
		const error = await failure(
			callService(context, { method: 'HEAD', path: '/api/images/unknown-hashcode' }),
		);
		expect(error.httpCode).toBe('404');
		expect(error.message).toContain('/api/images/unknown-hashcode');
	});

	it('a 301 is handed back, not followed; its Location is fetched with the credential', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		const upload = await uploadXml(context, `${XML}<!--emulator:fail-->`);
		const sessionId = upload.body.trim();
		const result = await callService(context, {
			method: 'GET',
			path: `/api/status/${sessionId}/result`,
			allowStatus: [202, 301],
			responseType: 'text',
		});
		expect(result.statusCode).toBe(301);
		expect(result.headers.location).toContain(sessionId);
		expect(service.stats().requests['GET /api/status/{id}/errors'] ?? 0).toBe(0);

		const document = await fetchServiceUrl(context, result.headers.location, 0);
		expect(document.statusCode).toBe(200);
		expect(document.body).toContain('ProcessingFailed');
		expect(service.stats().requests['GET /api/status/{id}/errors']).toBe(1);
	});

	it('an unexpected redirect is an error naming its target, not followed', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		const upload = await uploadXml(context, `${XML}<!--emulator:fail-->`);
		const error = await failure(
			callService(context, { method: 'GET', path: `/api/status/${upload.body.trim()}/result` }),
		);
		expect(error.message).toMatch(/redirect \(301\), which is not followed/);
		expect(error.description).toMatch(/Location: /);
		expect(service.stats().requests['GET /api/status/{id}/errors'] ?? 0).toBe(0);
	});

	it.each([
		['a 500', '500'],
		['a connection reset', 'reset'],
	])('GET is retried after %s', async (_name, kind) => {
		await postControl(service.url, 'faults', { count: 1, kind, path: '/api/auth/me' });
		const context = createContext({ credentials: credentialsFor(service.url) });
		const response = await callService(context, { method: 'GET', path: '/api/auth/me' });
		expect(response.statusCode).toBe(200);
		expect(service.stats().requests['GET /api/auth/me']).toBe(2);
	});

	it('GET gives up after a bounded number of 500s', async () => {
		await postControl(service.url, 'faults', { count: 10, kind: '500', path: '/api/auth/me' });
		const context = createContext({ credentials: credentialsFor(service.url) });
		const error = await failure(callService(context, { method: 'GET', path: '/api/auth/me' }));
		expect(error.httpCode).toBe('500');
		// The documented 3 tries.
		expect(service.stats().requests['GET /api/auth/me']).toBe(3);
	});

	it('PUT is not sent again after a connection reset, and says so', async () => {
		await postControl(service.url, 'faults', { count: 1, kind: 'reset', path: '/api/xml' });
		const context = createContext({ credentials: credentialsFor(service.url) });
		const error = await failure(
			callService(context, {
				method: 'PUT',
				path: '/api/xml',
				body: XML,
				headers: { 'Content-Type': 'application/xml' },
				itemIndex: 4,
			}),
		);
		expect(error.message).toMatch(/may or may not have received it/);
		expect(error.description).toMatch(/not sent again automatically/);
		expect(error.context).toEqual(expect.objectContaining({ itemIndex: 4 }));
		expect(service.stats().requests['PUT /api/xml']).toBe(1);
		// The emulator did receive it: exactly the case a blind retry would duplicate.
		expect(service.uploads()).toHaveLength(1);
		expectNoSecrets(renderError(error));
	});

	it('PUT is not sent again after a 500', async () => {
		await postControl(service.url, 'faults', { count: 1, kind: '500', path: '/api/xml' });
		const context = createContext({ credentials: credentialsFor(service.url) });
		const error = await failure(
			callService(context, {
				method: 'PUT',
				path: '/api/xml',
				body: XML,
				headers: { 'Content-Type': 'application/xml' },
			}),
		);
		expect(error.message).toMatch(/may or may not have received it/);
		expect(service.stats().requests['PUT /api/xml']).toBe(1);
	});

	it('a streamed body is sent as a stream', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		const response = await uploadXml(
			context,
			Readable.from([Buffer.from(XML.slice(0, 20)), Buffer.from(XML.slice(20))]),
		);
		expect(response.statusCode).toBe(202);
		expect(service.uploads()[0].byteLength).toBe(Buffer.byteLength(XML));
	});

	it('nothing logged carries a secret', async () => {
		const context = createContext({ credentials: credentialsFor(service.url) });
		await postControl(service.url, 'faults', { count: 1, kind: '500', path: '/api/auth/me' });
		await callService(context, { method: 'GET', path: '/api/auth/me' });
		await failure(
			callService(createContext({ credentials: credentialsFor(service.url, { password: 'x' }) }), {
				method: 'GET',
				path: '/api/auth/me',
			}),
		);
		expectNoSecrets(context.logged.join('\n'));
	});

	it.each([403, 400, 404, 409])(
		"the service's own message in a %s: at most 300 characters, on one line",
		async (status) => {
			const forged = '\n2026-01-01T00:00:00.000Z | error | Forged entry\r\u2028\u0000';
			const capture = await startCapture(() => ({
				status,
				body: JSON.stringify({ message: `${'m'.repeat(200_000)}${forged}` }),
			}));
			try {
				const context = createContext({ credentials: credentialsFor(capture.url) });
				const error = await failure(
					callService(context, { method: 'GET', path: '/api/xml/2026-01-01', itemIndex: 0 }),
				);
				expect(error.message.length).toBeLessThanOrEqual(300);
				for (const text of [error.message, String(error.description ?? '')]) {
					expect(text).not.toMatch(/m{300}/);
					expect(text).not.toMatch(/[\p{Cc}\u2028\u2029]/u);
				}
				expect([error.message, error.description]).toContainEqual(
					expect.stringMatching(/^m{299}…$/),
				);
				const short = await startCapture(() => ({
					status,
					body: JSON.stringify({ message: `Refused${forged}` }),
				}));
				try {
					const said = await failure(
						callService(createContext({ credentials: credentialsFor(short.url) }), {
							method: 'GET',
							path: '/api/xml/2026-01-01',
						}),
					);
					expect([said.message, said.description]).toContain(
						'Refused 2026-01-01T00:00:00.000Z | error | Forged entry',
					);
				} finally {
					await short.close();
				}
			} finally {
				await capture.close();
			}
		},
	);
});

describe('rate limit', () => {
	// A full bucket that drains slowly enough to be still full when the request arrives, however
	// busy the machine; the client knows the same terms, and only the service's refusal holds it back.
	const SLOW_LEAK_MS = 2000;
	jest.setTimeout(30_000);

	/** The service, its bucket full, and a caller that knows its terms. */
	async function fullService(
		options: EmulatorOptions = {},
	): Promise<{ service: Emulator; context: TestContext }> {
		const service = await emulator({ leakIntervalMs: SLOW_LEAK_MS, ...options });
		await postControl(service.url, 'bucket', { username: DEFAULT_ACCOUNT.username, level: 50 });
		const context = createContext({
			credentials: credentialsFor(service.url, fastTerms(SLOW_LEAK_MS)),
		});
		return { service, context };
	}

	it('429 with Retry-After seconds: penalised, retried, succeeds', async () => {
		const { service, context } = await fullService();
		const response = await callService(context, { method: 'GET', path: '/api/auth/me' });
		expect(response.statusCode).toBe(200);
		expect(service.stats().rejected429).toBeGreaterThanOrEqual(1);
		expect(context.logged.some((line) => line.includes('bucket full'))).toBe(true);
	});

	it.each([
		['429 with an HTTP date: retried, succeeds', '429-date'],
		['503: retried through the limiter, succeeds', '503'],
	] as const)('%s', async (_name, rateLimitAnswer) => {
		const { service, context } = await fullService({ rateLimitAnswer });
		const response = await callService(context, { method: 'GET', path: '/api/auth/me' });
		expect(response.statusCode).toBe(200);
		expect(service.stats().rejected429).toBeGreaterThanOrEqual(1);
	});

	it('an upload refused with 429 is sent again (nothing was stored), exactly once stored', async () => {
		const { service, context } = await fullService();
		const response = await callService(context, {
			method: 'PUT',
			path: '/api/xml',
			body: XML,
			headers: { 'Content-Type': 'application/xml' },
		});
		expect(response.statusCode).toBe(202);
		expect(service.stats().rejected429).toBeGreaterThanOrEqual(1);
		expect(service.uploads()).toHaveLength(1);
	});

	it('a stream refused as rate limited is not sent again; a body factory is', async () => {
		const service = await emulator({ leakIntervalMs: 50 });
		const context = createContext({ credentials: credentialsFor(service.url, fastTerms(50)) });
		await postControl(service.url, 'faults', { count: 1, kind: '429', path: '/api/xml' });
		const error = await failure(
			callService(context, {
				method: 'PUT',
				path: '/api/xml',
				body: Readable.from([Buffer.from(XML)]),
				headers: { 'Content-Type': 'application/xml' },
				itemIndex: 1,
			}),
		);
		expect(error.message).toMatch(/cannot be repeated: its body is a stream/);
		expect(error.description).toMatch(/nothing was stored/);
		expect(service.stats().requests['PUT /api/xml']).toBe(1);

		await postControl(service.url, 'faults', { count: 1, kind: '429', path: '/api/xml' });
		let created = 0;
		const response = await callService(context, {
			method: 'PUT',
			path: '/api/xml',
			body: () => {
				created++;
				return Readable.from([Buffer.from(XML)]);
			},
			headers: { 'Content-Type': 'application/xml' },
		});
		expect(response.statusCode).toBe(202);
		expect(created).toBe(2);
		expect(service.uploads()).toHaveLength(1);
	});

	it('gives up after 6 refusals and twice the time the bucket takes to drain, and says the rate limit was reached', async () => {
		const service = await emulator({ bucketCapacity: 10, leakIntervalMs: 10 });
		await postControl(service.url, 'faults', { count: 1000, kind: '429', path: '/api/auth/me' });
		const context = createContext({ credentials: credentialsFor(service.url, fastTerms(10, 10)) });
		const started = Date.now();
		const error = await failure(
			callService(context, { method: 'GET', path: '/api/auth/me', itemIndex: 5 }),
		);
		expect(error.message).toMatch(
			/^The service's request limit was reached: GET \/api\/auth\/me was refused \d+ times \(429\)$/,
		);
		expect(error.context).toEqual(expect.objectContaining({ itemIndex: 5 }));
		expect(service.stats().requests['GET /api/auth/me']).toBeGreaterThanOrEqual(6);
		// Drained twice: 2 x 10 x 10 ms after the first refusal.
		expect(Date.now() - started).toBeGreaterThanOrEqual(200);
	});

	it('requests beyond the burst wait for the limiter instead of bouncing', async () => {
		// The service leaks faster than the credential says, so that the event-loop delays of a busy
		// machine (which can make two requests arrive closer together than they left) cannot turn into
		// a refusal; without the limiter's waits, 7 of the 12 requests would still bounce.
		const service = await emulator({ bucketCapacity: 5, leakIntervalMs: 150 });
		const context = createContext({ credentials: credentialsFor(service.url, fastTerms(250, 5)) });
		const responses = await Promise.all(
			Array.from({ length: 12 }, () =>
				callService(context, { method: 'GET', path: '/api/auth/me' }),
			),
		);
		expect(responses.every((r) => r.statusCode === 200)).toBe(true);
		expect(service.stats().rejected429).toBe(0);
		// At least one each: on a busy machine a GET whose connection broke before its answer is sent
		// again (seen once under load: 13), which is the transport's retry, not a bounce.
		expect(service.stats().requests['GET /api/auth/me']).toBeGreaterThanOrEqual(12);
	});

	it('a cancelled execution stops waiting for the limiter', async () => {
		const service = await emulator({ bucketCapacity: 1, leakIntervalMs: 60_000 });
		const controller = new AbortController();
		const context = createContext({
			credentials: credentialsFor(service.url, fastTerms(60_000, 1)),
			signal: controller.signal,
		});
		await callService(context, { method: 'GET', path: '/api/auth/me' });
		const waiting = callService(context, { method: 'GET', path: '/api/auth/me', itemIndex: 0 });
		setTimeout(() => controller.abort(), 20);
		const error = await failure(waiting);
		expect(error.message).toMatch(/cancelled/);
		expect(service.stats().requests['GET /api/auth/me']).toBe(1);
	});
});

/** A node run whose Allowed Internal Hosts name these local servers. */
function allowing(baseUrl: string, ...servers: string[]) {
	return createContext({
		credentials: credentialsFor(baseUrl),
		nodeParameters: {
			options: { allowedInternalHosts: servers.map((url) => new URL(url).host).join(', ') },
		},
	});
}

describe('fetchServiceUrl', () => {
	it("another origin is fetched without the credential and outside the account's limiter, where Allowed Internal Hosts names it", async () => {
		const service = await emulator();
		const capture = await startCapture(() => ({ status: 200, body: 'error document' }));
		try {
			const context = allowing(service.url, capture.url);
			const response = await fetchServiceUrl(context, `${capture.url}/errors/1?sig=x`, 0);
			expect(response.body).toBe('error document');
			expect(capture.seen).toHaveLength(1);
			expect(capture.seen[0].url).toBe('/errors/1?sig=x');
			expect(capture.seen[0].headers.authorization).toBeUndefined();
			expect(capture.seen[0].headers.customerid).toBeUndefined();
			expect(capture.seen[0].headers.customeridtype).toBeUndefined();
			expectNoSecrets(JSON.stringify(capture.seen[0].headers));
			expect(service.stats().requests).toEqual({});
		} finally {
			await capture.close();
		}
	});

	it('another origin reaches the public internet over https only: an internal one, a Base URL on this machine or not, or another scheme, is refused before anything is sent', async () => {
		const capture = await startCapture(() => ({ status: 200, body: 'error document' }));
		try {
			const local = createContext({ credentials: credentialsFor(capture.url) });
			const remote = createContext({
				credentials: credentialsFor('https://integration.example.com'),
			});
			const host = new URL(capture.url).host;
			// Another origin than a Base URL on this machine gets no plain http either.
			const beside = `localhost:${new URL(capture.url).port}`;
			for (const [context, other] of [
				[local, beside],
				[remote, host],
			] as const) {
				const plain = await failure(fetchServiceUrl(context, `http://${other}/errors/1`, 0));
				expect(plain.message).toBe(
					`The service handed out an error document on ${other}, which is not fetched: it is not an https URL`,
				);
			}
			const internal = await failure(fetchServiceUrl(remote, `https://${host}/errors/1`, 0));
			expect(internal.message).toBe(
				`The service handed out an error document on ${host}, which is not fetched: it leads to a loopback address`,
			);
			const closed = await failure(fetchServiceUrl(remote, 'https://127.0.0.1:1/errors/1', 0));
			expect(closed.message).toBe(
				'The service handed out an error document on 127.0.0.1:1, which is not fetched: it leads to a loopback address',
			);
			const metadata = await failure(
				fetchServiceUrl(remote, 'https://169.254.169.254/latest/meta-data/', 0),
			);
			expect(metadata.message).toMatch(/it leads to a link-local address/);
			const besideNamed = await failure(
				fetchServiceUrl(
					allowing('https://integration.example.com', capture.url),
					`http://${beside}/errors/1`,
					0,
				),
			);
			expect(besideNamed.message).toMatch(/it is not an https URL$/);
			expect((await failure(fetchServiceUrl(local, 'file:///etc/passwd', 0))).message).toMatch(
				/it is not an https URL$/,
			);
			expect((await failure(fetchServiceUrl(local, 'ftp://127.0.0.1/x', 0))).message).toMatch(
				/it is not an https URL$/,
			);
			expect(capture.seen).toHaveLength(0);
		} finally {
			await capture.close();
		}
	});

	it('another origin whose name does not resolve reads as one whose name leads inside the network, and nothing is sent', async () => {
		const capture = await startCapture(() => ({ status: 200, body: 'error document' }));
		try {
			const remote = createContext({
				credentials: credentialsFor('https://integration.example.com'),
			});
			const beside = `localhost:${new URL(capture.url).port}`;
			const unresolved = await failure(
				fetchServiceUrl(remote, 'https://nowhere.invalid/errors/1', 0),
			);
			const internal = await failure(fetchServiceUrl(remote, `https://${beside}/errors/1`, 0));
			const hidden = (hostname: string) =>
				`${hostname} is either unreachable or not on the public internet (a host inside your network is reached only where Allowed Internal Hosts names it)`;
			expect(unresolved.message).toBe(
				`The service handed out an error document on nowhere.invalid, which is not fetched: ${hidden('nowhere.invalid')}`,
			);
			expect(internal.message).toBe(
				`The service handed out an error document on ${beside}, which is not fetched: ${hidden('localhost')}`,
			);
			expect(internal.description).toBe(unresolved.description);
			expect(capture.seen).toHaveLength(0);
		} finally {
			await capture.close();
		}
	});

	it("another origin's answer is read within the same bound as the service's, and its refusal names no credential", async () => {
		const service = await emulator();
		const huge = await startCapture(() => ({ status: 200, body: 'x'.repeat(2 * 1024 * 1024) }));
		const refusing = await startCapture(() => ({
			status: 401,
			body: '{"message":"Signature expired"}',
		}));
		try {
			const context = allowing(service.url, huge.url, refusing.url);
			const response = await fetchServiceUrl(context, `${huge.url}/errors/1`, 0);
			expect(response.body).toMatch(
				/^x{1048576}\n\[truncated: longer than 1 MiB, the rest was not read\]$/,
			);
			const error = await failure(fetchServiceUrl(context, `${refusing.url}/errors/1`, 0));
			expect(error.message).toBe(
				`GET /errors/1 on ${new URL(refusing.url).host} answered with status 401`,
			);
			expect(error.description).toBe('Signature expired');
			// No check of the credential's login follows a refusal of another host.
			expect(service.stats().requests).toEqual({});
			expect(refusing.seen).toHaveLength(1);
		} finally {
			await huge.close();
			await refusing.close();
		}
	});

	it('the base URL origin gets the credential; a relative URL is read against it', async () => {
		const capture = await startCapture(() => ({ status: 200, body: 'ok' }));
		try {
			const context = createContext({ credentials: credentialsFor(capture.url) });
			await fetchServiceUrl(context, '/api/status/abc/errors', 0);
			expect(capture.seen[0].url).toBe('/api/status/abc/errors');
			expect(capture.seen[0].headers.authorization).toBe(`Basic ${BASIC}`);
			expect(capture.seen[0].headers.customerid).toBe('1001');
			expect(capture.seen[0].headers.customeridtype).toBe('ServiceID');
		} finally {
			await capture.close();
		}
	});

	it('does not follow a redirect', async () => {
		const capture = await startCapture(() => ({ status: 302, body: '' }));
		try {
			const context = createContext({ credentials: credentialsFor(capture.url) });
			const error = await failure(fetchServiceUrl(context, `${capture.url}/elsewhere`, 0));
			expect(error.message).toMatch(/redirect \(302\)/);
			expect(capture.seen).toHaveLength(1);
		} finally {
			await capture.close();
		}
	});
});

describe('streaming', () => {
	it('a stream body reaches the service while it is still being produced (never buffered first)', async () => {
		let firstChunkArrived: () => void = () => undefined;
		const arrived = new Promise<void>((resolve) => {
			firstChunkArrived = resolve;
		});
		let received = 0;
		const server = await listenLocal((req, res) => {
			req.on('data', (chunk: Buffer) => {
				received += chunk.length;
				firstChunkArrived();
			});
			req.on('end', () => {
				res.writeHead(202, { 'content-type': 'text/plain' });
				res.end('session');
			});
		});
		try {
			// The second half exists only once the first half has reached the server: a client that
			// read the whole stream before sending would wait forever.
			async function* body() {
				yield Buffer.alloc(64 * 1024, 'a');
				await arrived;
				yield Buffer.alloc(64 * 1024, 'b');
			}
			const context = createContext({ credentials: credentialsFor(server.url) });
			const timeout = new Promise<never>((_, reject) =>
				setTimeout(() => reject(new Error('The stream was buffered before sending')), 5000).unref(),
			);
			const response = await Promise.race([uploadXml(context, Readable.from(body())), timeout]);
			expect(response.statusCode).toBe(202);
			expect(received).toBe(128 * 1024);
		} finally {
			await server.close();
		}
	});
});

describe('credential headers', () => {
	it('Basic auth and the customer headers of the credential are sent', async () => {
		const capture = await startCapture(() => ({ status: 200, body: '{"ok":true}' }));
		try {
			const context = createContext({
				credentials: credentialsFor(capture.url, {
					customerId: 'SHOP-NORTH',
					customerIdType: 'ExternalID',
				}),
			});
			const response = await callService<{ ok: boolean }>(context, {
				method: 'GET',
				path: '/api/xml/2025-01-01',
			});
			expect(response.body).toEqual({ ok: true });
			const { headers } = capture.seen[0];
			expect(headers.authorization).toBe(`Basic ${BASIC}`);
			expect(headers.customerid).toBe('SHOP-NORTH');
			expect(headers.customeridtype).toBe('ExternalID');
		} finally {
			await capture.close();
		}
	});
});

describe('a service whose certificate n8n does not trust', () => {
	it("fails a GET and an upload saying it is the certificate, that nothing was sent, and how to trust a company's authority", async () => {
		// An authority of the test's own, which this process was not told of (NODE_EXTRA_CA_CERTS).
		const certificates = mkdtempSync(join(tmpdir(), 'service-ca-'));
		makeCertificates(certificates, 'Service Test CA');
		let reached = 0;
		const service = createHttpsServer(
			{
				key: readFileSync(join(certificates, 'server.key')),
				cert: readFileSync(join(certificates, 'server.crt')),
			},
			(_request, response) => {
				reached++;
				response.end();
			},
		);
		service.listen(0, '127.0.0.1');
		await once(service, 'listening');
		try {
			const url = `https://127.0.0.1:${(service.address() as AddressInfo).port}`;
			const context = createContext({ credentials: credentialsFor(url) });
			const get = await failure(callService(context, { method: 'GET', path: '/api/auth/me' }));
			expect(get.message).toMatch(
				/^GET \/api\/auth\/me failed: the service's TLS certificate was not accepted \(unable to verify the first certificate/,
			);
			expect(get.description).toContain('NODE_EXTRA_CA_CERTS');
			expect(get.description).toContain('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
			const upload = await failure(uploadXml(context, XML));
			expect(upload.message).toMatch(
				/^PUT \/api\/xml failed: the service's TLS certificate was not accepted \(unable to verify the first certificate/,
			);
			expect(upload.description).toMatch(/^The request did not reach the service/);
			expect(reached).toBe(0);
			expectNoSecrets(renderError(get));
		} finally {
			service.close();
			rmSync(certificates, { recursive: true, force: true });
		}
	});
});
