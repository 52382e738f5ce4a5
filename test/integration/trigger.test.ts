import type { IDataObject, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegrationTrigger } from '../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node';
import { clearLoggedLines, getLoggedLines, NODE_NAME, runPoll } from '../../scripts/n8n/in-process';
import { putXml } from '../../scripts/emulator/client';
import { fakeDateOnly } from '../helpers/clock';
import { useEmulator } from '../helpers/emulator';
import { postControl } from '../helpers/service';

/**
 * The trigger against the emulator, polled through n8n-core's poll executor. Time is simulated:
 * only `Date` is faked (timers stay real, so HTTP keeps working) and the emulator reads the same
 * clock, so the trigger's dates, the emulator's receivedAt, processing and bucket all agree.
 */

const trigger = new ProductDataIntegrationTrigger();
const MINUTE = 60_000;
const LIST = 'GET /api/xml/{date}';
const RESULT = 'GET /api/status/{id}/result';
const ERROR_DOCUMENT = 'GET /api/status/{id}/errors';

beforeEach(async () => {
	fakeDateOnly(Date.parse('2025-03-10T12:00:00Z'));
	clearLoggedLines();
});

afterEach(() => {
	jest.useRealTimers();
});

// Started after the clock is set. A fresh emulator (new base URL) per test also gives each test
// its own client-side limiter.
const { emulator, credentials, restart } = useEmulator({ now: () => Date.now() }, 'test');

function setTime(iso: string): void {
	jest.setSystemTime(Date.parse(iso));
}

function advance(ms: number): void {
	jest.setSystemTime(Date.now() + ms);
}

interface UploadOptions {
	processingMs?: number;
	fail?: boolean;
	customerId?: string;
}

/** Uploads a document as another client of the account would, straight to the emulator. */
async function upload(options: UploadOptions = {}): Promise<string> {
	const markers = [
		options.processingMs === undefined
			? ''
			: `<!--emulator:processing-ms=${options.processingMs}-->`,
		options.fail ? '<!--emulator:fail-->' : '',
	].join('');
	const response = await putXml(
		emulator,
		`<?xml version="1.0" encoding="UTF-8"?>${markers}<Products><Product><Id>1</Id></Product></Products>`,
		'/api/xml',
		{ customer: { customerId: options.customerId ?? '1001', customerIdType: 'ServiceID' } },
	);
	expect(response.status).toBe(202);
	return response.text.trim();
}

/** The next `count` requests to `path` fail with a 500, more than the transport's retries. */
function failRequests(path: string, count: number): Promise<void> {
	return postControl(emulator.url, 'faults', { count, kind: '500', path });
}

interface PollRecord {
	items: IDataObject[];
	requests: Record<string, number>;
	staticData: IDataObject;
}

/** One poll in trigger mode; throws what the poll reported through n8n's error path. */
async function poll(
	parameters: INodeParameters,
	staticData: IDataObject,
	credentialFields: Record<string, string> = {},
): Promise<PollRecord> {
	const before = emulator.stats().requests;
	const result = await runPoll(
		trigger,
		parameters,
		{ ...credentials(), ...credentialFields },
		staticData,
	);
	if (result.error) throw result.error;
	const after = emulator.stats().requests;
	const requests: Record<string, number> = {};
	for (const [key, count] of Object.entries(after)) {
		const delta = count - (before[key] ?? 0);
		if (delta > 0) requests[key] = delta;
	}
	const items = (result.output?.[0] ?? []).map((item: INodeExecutionData) => item.json);
	if (result.output !== null) expect(items.length).toBeGreaterThan(0);
	return { items, requests, staticData: result.staticData };
}

/** The trigger's own part of the workflow static data. */
function triggerState(staticData: IDataObject): IDataObject {
	return (staticData[`node:${NODE_NAME}`] ?? {}) as IDataObject;
}

/** The dates whose listed ids the trigger keeps. */
function listedDays(state: IDataObject): string[] {
	return (state.seen as Array<{ day: string }>).map(({ day }) => day);
}

const finished = (options: INodeParameters = {}, status = 'any'): INodeParameters => ({
	events: ['uploadFinished'],
	status,
	options,
});

describe('ProductDataIntegrationTrigger', () => {
	it('starts from now: the first poll emits no history, later polls report only new uploads', async () => {
		const old = [
			await upload(),
			await upload({ fail: true }),
			await upload({ processingMs: 10 * MINUTE }),
		];
		advance(MINUTE);

		const first = await poll({ events: ['uploadFinished', 'uploadReceived'], status: 'any' }, {});
		expect(first.items).toEqual([]);
		// Only the listing: no status checks for history.
		expect(first.requests).toEqual({ [LIST]: 1 });

		advance(20 * MINUTE);
		const second = await poll(
			{ events: ['uploadFinished', 'uploadReceived'], status: 'any' },
			first.staticData,
		);
		expect(second.items).toEqual([]);
		expect(second.requests).toEqual({ [LIST]: 1 });

		const fresh = await upload();
		advance(MINUTE);
		const third = await poll(
			{ events: ['uploadFinished', 'uploadReceived'], status: 'any' },
			second.staticData,
		);
		expect(third.items.map((item) => [item.id, item.event])).toEqual([
			[fresh, 'uploadReceived'],
			[fresh, 'uploadFinished'],
		]);
		expect(third.items.some((item) => old.includes(item.id as string))).toBe(false);
	});

	it('lists the service’s day in the credential’s Service Time Zone, as Get Many does', async () => {
		setTime('2025-03-10T20:00:00Z');
		const received = { events: ['uploadReceived'], status: 'any' };
		const utc = await poll(received, {});
		const kiritimati = await poll(received, {}, { serviceTimeZone: 'Pacific/Kiritimati' });
		const id = await upload();
		advance(MINUTE);

		// The emulator dates uploads in UTC: 20:01 UTC on the 10th is already the 11th at UTC+14.
		const inUtc = await poll(received, utc.staticData);
		expect(inUtc.items.map((item) => [item.id, item.listedDate])).toEqual([[id, '2025-03-10']]);
		const inKiritimati = await poll(received, kiritimati.staticData, {
			serviceTimeZone: 'Pacific/Kiritimati',
		});
		expect(inKiritimati.items).toEqual([]);
		expect(inKiritimati.requests).toEqual({ [LIST]: 1 });
	});

	it('emits a finished session once, with the record, its status and error URL', async () => {
		const parameters = finished();
		let { staticData } = await poll(parameters, {});
		const ok = await upload({ processingMs: 90_000 });
		const bad = await upload({ fail: true });
		advance(MINUTE);

		const first = await poll(parameters, staticData);
		// One list and one check each; the slow one is still processing.
		expect(first.requests).toEqual({ [LIST]: 1, [RESULT]: 2 });
		expect(first.items).toHaveLength(1);
		expect(first.items[0]).toMatchObject({
			id: bad,
			event: 'uploadFinished',
			status: 'failed',
			fileLenght: expect.any(Number),
			sentBy: { serviceId: 1001, name: 'North Shop' },
			result: expect.stringContaining(`/api/status/${bad}/result`),
			errors: [expect.objectContaining({ code: 'ProcessingFailed' })],
			listedDate: '2025-03-10',
		});
		expect(first.items[0].fileLength).toBe(first.items[0].fileLenght);
		expect(first.items[0].errorUrl).toBe(`${emulator.url}/api/status/${bad}/errors`);
		expect(first.items[0]).not.toHaveProperty('errorMessage');
		staticData = first.staticData;

		advance(MINUTE);
		const second = await poll(parameters, staticData);
		expect(second.items).toEqual([
			expect.objectContaining({
				id: ok,
				status: 'succeeded',
				errorUrl: null,
				receivedAt: expect.any(String),
			}),
		]);
		advance(MINUTE);
		const third = await poll(parameters, second.staticData);
		expect(third.items).toEqual([]);
		expect(third.requests).toEqual({ [LIST]: 1 });
	});

	it('filters finished sessions by status and fetches error messages on request, only for those it emits', async () => {
		const succeeded = finished({ includeErrorMessage: true }, 'succeeded');
		const failed = finished({ includeErrorMessage: true }, 'failed');
		let a = (await poll(succeeded, {})).staticData;
		let b = (await poll(failed, {})).staticData;
		const ok = await upload();
		const bad = await upload({ fail: true });
		advance(MINUTE);

		const onlyOk = await poll(succeeded, a);
		expect(onlyOk.items.map((item) => [item.id, item.status, item.errorMessage])).toEqual([
			[ok, 'succeeded', null],
		]);
		expect(onlyOk.requests).toEqual({ [LIST]: 1, [RESULT]: 2 });
		const onlyBad = await poll(failed, b);
		expect(onlyBad.items.map((item) => [item.id, item.status])).toEqual([[bad, 'failed']]);
		// The emulator's error document is JSON: its reason is a field, the document and its text are kept.
		expect(onlyBad.items[0].errorMessage).toBe('Processing of the document ended with 1 error(s).');
		expect(onlyBad.items[0].errorDocument).toMatchObject({ id: bad, errors: [expect.any(Object)] });
		expect(JSON.parse(onlyBad.items[0].errorText as string)).toEqual(
			onlyBad.items[0].errorDocument,
		);
		// The other trigger's listing of the same moment serves; its status answers came without
		// the error message this one asks for, so it asks for its own.
		expect(onlyBad.requests).toEqual({ [RESULT]: 2, [ERROR_DOCUMENT]: 1 });

		// The filtered-out session is finished too: it is not checked again.
		advance(MINUTE);
		a = (await poll(succeeded, onlyOk.staticData)).staticData;
		b = (await poll(failed, onlyBad.staticData)).staticData;
		expect(emulator.stats().requests[RESULT]).toBe(4);
		expect(triggerState(a).pending).toEqual([]);
		expect(triggerState(b).pending).toEqual([]);
	});

	it('reports new uploads without any status requests when only that event is chosen', async () => {
		const parameters = { events: ['uploadReceived'] };
		const { staticData } = await poll(parameters, {});
		const first = await upload({ processingMs: 10 * MINUTE });
		const second = await upload({ fail: true });
		advance(MINUTE);
		const result = await poll(parameters, staticData);
		expect(result.items).toEqual([
			expect.objectContaining({ id: first, event: 'uploadReceived' }),
			expect.objectContaining({ id: second, event: 'uploadReceived' }),
		]);
		expect(result.items[0]).not.toHaveProperty('status');
		advance(MINUTE);
		const again = await poll(parameters, result.staticData);
		expect(again.items).toEqual([]);
		expect(emulator.stats().requests[RESULT]).toBeUndefined();
	});

	it('reads a list answered as a single record, and resolves a relative error location', async () => {
		await restart({ listLayout: 'single', errorLocation: 'relative' });
		const parameters = finished();
		const { staticData } = await poll(parameters, {});
		const id = await upload({ fail: true });
		advance(MINUTE);
		const result = await poll(parameters, staticData);
		expect(result.items).toEqual([
			expect.objectContaining({
				id,
				status: 'failed',
				errorUrl: `${emulator.url}/api/status/${id}/errors`,
			}),
		]);
	});

	it('refuses to poll without an event', async () => {
		const result = await runPoll(trigger, { events: [] }, credentials(), {});
		expect(result.error?.message).toBe('Choose at least one event to trigger on');
		expect(emulator.stats().requests).toEqual({});
	});

	it('acts on the customer node of the option, and starts afresh when it changes', async () => {
		const north = await upload();
		const south = await upload({ customerId: '1002' });
		advance(MINUTE);
		const south1 = finished({ customer: '1002' });
		let { staticData } = await poll(finished(), {});
		// Another customer node: its uploads so far are history, not new ones.
		const switched = await poll(south1, staticData);
		expect(switched.items).toEqual([]);
		staticData = switched.staticData;

		const south2 = await upload({ customerId: '1002' });
		await upload();
		advance(MINUTE);
		const result = await poll(south1, staticData);
		expect(result.items.map((item) => item.id)).toEqual([south2]);
		expect(result.items[0].sentBy).toMatchObject({ serviceId: 1002 });
		expect([north, south]).not.toContain(result.items[0].id);
	});

	it('does not miss an upload of the last minute before midnight (UTC)', async () => {
		setTime('2025-03-10T23:58:00Z');
		const parameters = finished();
		let { staticData } = await poll(parameters, {});
		advance(MINUTE);
		staticData = (await poll(parameters, staticData)).staticData; // 23:59:00
		advance(45_000);
		const late = await upload(); // 23:59:45, listed under 2025-03-10
		advance(15_000);
		const afterMidnight = await poll(parameters, staticData); // 00:00:00
		expect(afterMidnight.items.map((item) => item.id)).toEqual([late]);
		expect(afterMidnight.items[0].receivedAt).toMatch(/^2025-03-10T23:59:45/);
		expect(afterMidnight.requests).toEqual({ [LIST]: 2, [RESULT]: 1 });

		// Once a listing well after midnight has been read, yesterday is no longer listed.
		staticData = afterMidnight.staticData;
		for (let minute = 1; minute <= 7; minute++) {
			advance(MINUTE);
			const next = await poll(parameters, staticData);
			expect(next.items).toEqual([]);
			staticData = next.staticData;
			expect(next.requests[LIST]).toBe(minute <= 5 ? 2 : 1);
		}
		expect(listedDays(triggerState(staticData))).toEqual(['2025-03-11']);
	});

	it('holds back only the session whose status check failed', async () => {
		const parameters = finished();
		const { staticData } = await poll(parameters, {});
		const flaky = await upload();
		const fine = await upload();
		advance(MINUTE);
		await failRequests(`/api/status/${flaky}/result`, 3);
		const first = await poll(parameters, staticData);
		expect(first.items.map((item) => item.id)).toEqual([fine]);
		expect(getLoggedLines().join('\n')).toContain('1 status check(s) failed');
		advance(MINUTE);
		const second = await poll(parameters, first.staticData);
		expect(second.items.map((item) => item.id)).toEqual([flaky]);
	});

	it('does not fail a poll whose only status check failed, and catches up on the next poll', async () => {
		const parameters = finished();
		const { staticData } = await poll(parameters, {});
		const id = await upload();
		advance(MINUTE);
		await failRequests(`/api/status/${id}/result`, 3);
		const failed = await runPoll(trigger, parameters, credentials(), staticData);
		expect(failed.error).toBeUndefined();
		expect(failed.output).toBeNull();
		expect(getLoggedLines().join('\n')).toContain(
			`1 status check(s) failed; those sessions are checked again on a later poll: `,
		);
		advance(MINUTE);
		const next = await poll(parameters, failed.staticData);
		expect(next.items.map((item) => [item.id, item.status])).toEqual([[id, 'succeeded']]);
	});

	it('reports a failed session once even when its error message cannot be fetched', async () => {
		const parameters = finished({ includeErrorMessage: true });
		const { staticData } = await poll(parameters, {});
		const bad = await upload({ fail: true });
		advance(MINUTE);
		// More failures than the transport retries: the error document stays out of reach.
		await failRequests(`/api/status/${bad}/errors`, 3);

		const result = await poll(parameters, staticData);
		expect(result.items).toEqual([
			expect.objectContaining({
				id: bad,
				status: 'failed',
				errorUrl: `${emulator.url}/api/status/${bad}/errors`,
				errorMessage: null,
				warning: expect.stringContaining('The error message could not be fetched'),
			}),
		]);
		expect(triggerState(result.staticData).pending).toEqual([]);
		advance(MINUTE);
		const next = await poll(parameters, result.staticData);
		expect(next.items).toEqual([]);
		expect(next.requests).toEqual({ [LIST]: 1 });
	});

	it('stops following a session the service does not know', async () => {
		const parameters = finished();
		const { staticData } = await poll(parameters, {});
		const unknown = '0b4c1c9e-3a57-4f0e-9d55-6c2f1d7e8a90';
		const state = triggerState(staticData);
		state.pending = [{ id: unknown, day: '2025-03-10', firstSeen: Date.now() }];
		advance(MINUTE);
		const result = await poll(parameters, staticData);
		expect(result.items).toEqual([]);
		expect(result.requests).toEqual({ [LIST]: 1, [RESULT]: 1 });
		expect(triggerState(result.staticData).pending).toEqual([]);
		expect(getLoggedLines().join('\n')).toContain(
			`Upload session ${unknown} is unknown to the service`,
		);
	});

	it('reports a failed listing as an error without losing anything', async () => {
		const parameters = { events: ['uploadReceived', 'uploadFinished'] };
		const { staticData } = await poll(parameters, {});
		const id = await upload();
		advance(MINUTE);
		await failRequests('/api/xml/', 3);
		const failed = await runPoll(trigger, parameters, credentials(), staticData);
		expect(failed.error).toBeDefined();
		expect(failed.staticData).toEqual(staticData);
		advance(MINUTE);
		const next = await poll(parameters, failed.staticData);
		expect(next.items.map((item) => [item.id, item.event])).toEqual([
			[id, 'uploadReceived'],
			[id, 'uploadFinished'],
		]);
	});

	it('keeps its state bounded: old dates are forgotten, endless sessions are given up', async () => {
		const parameters = finished();
		let { staticData } = await poll(parameters, {});
		const endless = await upload({ processingMs: 30 * 24 * 60 * MINUTE });
		for (let day = 0; day < 9; day++) {
			advance(day === 0 ? MINUTE : 24 * 60 * MINUTE);
			const result = await poll(parameters, staticData);
			expect(result.items).toEqual([]);
			staticData = result.staticData;
		}
		const state = triggerState(staticData);
		expect(state.pending).toEqual([]);
		expect(listedDays(state).length).toBeLessThanOrEqual(2);
		expect(getLoggedLines().join('\n')).toContain(
			`Upload session ${endless} is still unfinished after 7 days`,
		);
	});

	it('gives up a session whose status check failed 20 times in a row, saying so in one line', async () => {
		const parameters = finished();
		const { staticData } = await poll(parameters, {});
		const [twentieth, nineteenth] = [await upload(), await upload()];
		const state = triggerState(staticData);
		state.seen = [{ day: '2025-03-10', ids: [twentieth, nineteenth] }];
		state.pending = [
			{ id: twentieth, day: '2025-03-10', firstSeen: Date.now(), failedChecks: 19 },
			{ id: nineteenth, day: '2025-03-10', firstSeen: Date.now(), failedChecks: 18 },
		];
		advance(MINUTE);
		await failRequests(`/api/status/${twentieth}/result`, 3);
		await failRequests(`/api/status/${nineteenth}/result`, 3);
		const result = await poll(parameters, staticData);
		expect(result.items).toEqual([]);
		expect(triggerState(result.staticData).pending).toEqual([
			expect.objectContaining({ id: nineteenth, failedChecks: 19 }),
		]);
		const lines = getLoggedLines().filter((line) => line.includes('followed'));
		expect(lines).toEqual([
			expect.stringContaining(
				`Upload session ${twentieth} is no longer followed after 20 failed status checks in a row`,
			),
		]);
		advance(5 * MINUTE);
		expect((await poll(parameters, result.staticData)).items.map((item) => item.id)).toEqual([
			nineteenth,
		]);
	});

	describe('Fetch Test Event', () => {
		it('returns the most recent finished session and leaves the trigger state alone', async () => {
			const parameters = finished();
			const { staticData } = await poll(parameters, {});
			const older = await upload();
			advance(MINUTE);
			const newer = await upload({ fail: true });
			advance(MINUTE);
			await upload({ processingMs: 60 * MINUTE });
			advance(MINUTE);

			const result = await runPoll(trigger, parameters, credentials(), staticData, 'manual');
			expect(result.error).toBeUndefined();
			expect(result.output?.[0].map((item) => item.json)).toEqual([
				expect.objectContaining({ id: newer, status: 'failed', event: 'uploadFinished' }),
			]);
			expect(result.staticData).toEqual(staticData);

			const succeeded = await runPoll(
				trigger,
				finished({}, 'succeeded'),
				credentials(),
				staticData,
				'manual',
			);
			expect(succeeded.output?.[0].map((item) => item.json.id)).toEqual([older]);
		});

		it('looks at yesterday when today has nothing finished', async () => {
			setTime('2025-03-10T21:00:00Z');
			const yesterday = await upload();
			setTime('2025-03-11T08:00:00Z');
			await upload({ processingMs: 60 * MINUTE });
			const result = await runPoll(trigger, finished(), credentials(), {}, 'manual');
			expect(result.error).toBeUndefined();
			expect(result.output?.[0].map((item) => item.json.id)).toEqual([yesterday]);
			expect(result.staticData).toEqual({});
		});

		it('says what to do when nothing has finished today or yesterday', async () => {
			await upload({ processingMs: 60 * MINUTE });
			const result = await runPoll(trigger, finished(), credentials(), {}, 'manual');
			expect(result.error?.message).toBe(
				'No finished upload session found today or yesterday - upload a document and try again',
			);
			expect(result.output ?? null).toBeNull();
			expect(emulator.stats().requests).toMatchObject({ [LIST]: 2, [RESULT]: 1 });
		});

		it('returns the newest upload for New Upload Received', async () => {
			await upload();
			const newest = await upload({ processingMs: 60 * MINUTE });
			const result = await runPoll(
				trigger,
				{ events: ['uploadReceived'] },
				credentials(),
				{},
				'manual',
			);
			expect(result.output?.[0].map((item) => item.json)).toEqual([
				expect.objectContaining({ id: newest, event: 'uploadReceived' }),
			]);
			expect(emulator.stats().requests[RESULT]).toBeUndefined();
		});
	});

	// Hundreds of polls against the emulator: seconds of work, more on a loaded machine.
	it('survives a simulated day: each finished session emitted exactly once, no poll above its cap', async () => {
		const maxChecks = 3;
		const parameters = {
			events: ['uploadReceived', 'uploadFinished'],
			status: 'any',
			options: { maxChecks },
		};
		// Deterministic pseudo-random schedule (LCG), so a failure can be replayed.
		let seed = 20250310;
		const random = () => {
			seed = (seed * 1103515245 + 12345) % 2 ** 31;
			return seed / 2 ** 31;
		};
		setTime('2025-03-10T21:30:00Z');
		await upload(); // history: before activation
		advance(30 * MINUTE);

		interface Planned {
			at: number;
			processingMs: number;
			fail: boolean;
		}
		const start = Date.now(); // 22:00
		const plan: Planned[] = [];
		for (let i = 0; i < 50; i++) {
			// Over two and a half hours around midnight, some slow, some failing.
			const slow = random() < 0.15;
			plan.push({
				at: start + Math.floor(random() * 150 * MINUTE),
				processingMs: slow
					? Math.floor((5 + random() * 25) * MINUTE)
					: Math.floor(random() * 50_000),
				fail: random() < 0.25,
			});
		}
		// A burst larger than the per-poll cap, and uploads in the last seconds before midnight.
		for (let i = 0; i < 8; i++)
			plan.push({ at: start + 75 * MINUTE, processingMs: 0, fail: i % 3 === 0 });
		plan.push({ at: Date.parse('2025-03-10T23:59:58Z'), processingMs: 1000, fail: false });
		plan.push({ at: Date.parse('2025-03-10T23:59:59Z'), processingMs: 90 * MINUTE, fail: true });
		plan.sort((a, b) => a.at - b.at);

		const expected = new Map<string, 'succeeded' | 'failed'>();
		const emitted = new Map<string, { finished: string[]; received: number }>();
		let staticData: IDataObject = (await poll(parameters, {})).staticData;
		let lastEmittingSnapshot = staticData;
		let restarted = false;
		let next = 0;
		const end = Date.parse('2025-03-11T02:30:00Z');
		let polls = 0;
		for (let pollAt = start + MINUTE; pollAt <= end; pollAt += MINUTE) {
			while (next < plan.length && plan[next].at < pollAt) {
				jest.setSystemTime(plan[next].at);
				const id = await upload({ processingMs: plan[next].processingMs, fail: plan[next].fail });
				expected.set(id, plan[next].fail ? 'failed' : 'succeeded');
				next++;
			}
			jest.setSystemTime(pollAt);
			// After 00:30, once the last poll emitted nothing, n8n restarts and reads back the static
			// data last saved with an emitted execution (the worst case: a poll that emits nothing
			// need not be saved).
			if (
				!restarted &&
				pollAt >= Date.parse('2025-03-11T00:30:00Z') &&
				staticData !== lastEmittingSnapshot
			) {
				staticData = lastEmittingSnapshot;
				restarted = true;
			}
			const result = await poll(parameters, staticData);
			polls++;
			expect(result.requests[RESULT] ?? 0).toBeLessThanOrEqual(maxChecks);
			expect(result.requests[LIST]).toBeGreaterThanOrEqual(1);
			expect(result.requests[LIST]).toBeLessThanOrEqual(2);
			for (const item of result.items) {
				const id = item.id as string;
				const entry = emitted.get(id) ?? { finished: [], received: 0 };
				if (item.event === 'uploadReceived') entry.received++;
				else entry.finished.push(item.status as string);
				emitted.set(id, entry);
			}
			staticData = result.staticData;
			if (result.items.length > 0) lastEmittingSnapshot = staticData;
		}

		expect(restarted).toBe(true);
		expect(next).toBe(plan.length);
		expect(polls).toBe(270);
		expect(emitted.size).toBe(expected.size);
		for (const [id, status] of expected) {
			expect({ id, ...emitted.get(id) }).toEqual({ id, finished: [status], received: 1 });
		}
		expect(emulator.stats().rejected429).toBe(0);
		const state = triggerState(staticData);
		expect(state.pending).toEqual([]);
		expect(listedDays(state)).toEqual(['2025-03-11']);
	}, 60_000);
});
