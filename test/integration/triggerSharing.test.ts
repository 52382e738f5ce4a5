import Redis from 'ioredis';
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegrationTrigger } from '../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node';
import { closeStores, storeFor } from '../../nodes/shared/fullEdition/sharedRegistry';
import { sharedAnswer } from '../../nodes/shared/sharedAnswers';
import { DEFAULT_ACCOUNT, type Emulator } from '../../scripts/emulator';
import { createPollContext, runPoll } from '../../scripts/n8n/in-process';
import { freePort, sleep } from '../../scripts/n8n/processes';
import { startRedis, type RedisServer } from '../../scripts/redis';
import { fakeDateOnly } from '../helpers/clock';
import { startedEmulators } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';
import { startScriptedRedis } from '../helpers/redisWire';

/**
 * Triggers of one account and customer node share the day's listing and the status answers: the
 * triggers polled through n8n-core's poll executor against the emulator, the service's requests
 * counted where they are spent. Time is simulated as in trigger.test.ts: only `Date` is faked, and
 * the emulator reads the same clock.
 */

const trigger = new ProductDataIntegrationTrigger();
const MINUTE = 60_000;
const LIST = 'GET /api/xml/{date}';
const RESULT = 'GET /api/status/{id}/result';
const EVERY_MINUTE: INodeParameters = {
	events: ['uploadFinished', 'uploadReceived'],
	status: 'any',
	pollTimes: { item: [{ mode: 'everyMinute' }] },
};

beforeEach(() => {
	fakeDateOnly(Date.parse('2025-03-10T12:00:00Z'));
});

afterEach(() => {
	jest.useRealTimers();
});

const started = startedEmulators();

function advance(ms: number): void {
	jest.setSystemTime(Date.now() + ms);
}

async function upload(
	emulator: Emulator,
	customerId = '1001',
	marker = '<!--emulator:processing-ms=0-->',
): Promise<string> {
	const auth = Buffer.from(`${DEFAULT_ACCOUNT.username}:${DEFAULT_ACCOUNT.password}`).toString(
		'base64',
	);
	const response = await fetch(`${emulator.url}/api/xml`, {
		method: 'PUT',
		headers: {
			Authorization: `Basic ${auth}`,
			customerId,
			customerIdType: 'ServiceID',
			'Content-Type': 'application/xml',
		},
		body: `<?xml version="1.0" encoding="UTF-8"?>${marker}<Products><Product><Id>1</Id></Product></Products>`,
	});
	expect(response.status).toBe(202);
	return (await response.text()).trim();
}

/** One trigger of a workflow: its static data between polls and every event it emitted. */
class Watcher {
	staticData: IDataObject = {};

	readonly events: string[] = [];

	/** The items it emitted, as emitted. */
	readonly items: IDataObject[] = [];

	constructor(
		private readonly emulator: Emulator,
		private readonly credentialFields: IDataObject = {},
		private readonly parameters: INodeParameters = EVERY_MINUTE,
		private readonly poller: ProductDataIntegrationTrigger = trigger,
	) {}

	async poll(): Promise<string[]> {
		const result = await runPoll(
			this.poller,
			this.parameters,
			{
				environment: 'production',
				baseUrl: this.emulator.url,
				username: DEFAULT_ACCOUNT.username,
				password: DEFAULT_ACCOUNT.password,
				customerId: '1001',
				customerIdType: 'ServiceID',
				...this.credentialFields,
			},
			this.staticData,
		);
		if (result.error) throw result.error;
		this.staticData = result.staticData;
		const emitted = (result.output?.[0] ?? []).map(
			(item) => `${String(item.json.event)} ${String(item.json.id)}`,
		);
		this.events.push(...emitted);
		this.items.push(...(result.output?.[0] ?? []).map((item) => item.json));
		return emitted;
	}
}

function count(emulator: Emulator, route: string): number {
	return emulator.stats().requests[route] ?? 0;
}

/** Each upload received and finished, once each. */
function once(ids: string[]): string[] {
	return ids.flatMap((id) => [`uploadFinished ${id}`, `uploadReceived ${id}`]).sort();
}

describe('triggers of one account sharing the listing', () => {
	it('list the day once a minute for five triggers, each emitting every upload exactly once, status checks shared', async () => {
		const emulator = await started();
		const watchers = Array.from({ length: 5 }, () => new Watcher(emulator));
		for (const watcher of watchers) await watcher.poll();
		expect(count(emulator, LIST)).toBe(1);

		const ids: string[] = [];
		for (let minute = 1; minute <= 4; minute++) {
			ids.push(await upload(emulator));
			advance(MINUTE);
			for (const [n, watcher] of watchers.entries()) {
				advance(n * 1000);
				await watcher.poll();
			}
			advance(-10_000);
		}
		expect(count(emulator, LIST)).toBe(5);
		// Each session finished before its first check: one status request for the five triggers.
		expect(count(emulator, RESULT)).toBe(4);
		for (const watcher of watchers) expect([...watcher.events].sort()).toEqual(once(ids));
	});

	it('share one request between polls that miss at the same time', async () => {
		const emulator = await started();
		const watchers = Array.from({ length: 3 }, () => new Watcher(emulator));
		await Promise.all(watchers.map(async (watcher) => await watcher.poll()));
		expect(count(emulator, LIST)).toBe(1);
		const id = await upload(emulator);
		advance(MINUTE);
		await Promise.all(watchers.map(async (watcher) => await watcher.poll()));
		expect(count(emulator, LIST)).toBe(2);
		for (const watcher of watchers) expect([...watcher.events].sort()).toEqual(once([id]));
	});

	it('keep each account and each customer node to its own listing', async () => {
		const [one, other] = [await started(), await started()];
		const north = new Watcher(one);
		const south = new Watcher(one, { customerId: '1002' });
		const elsewhere = new Watcher(other);
		for (const watcher of [north, south, elsewhere]) await watcher.poll();
		expect([count(one, LIST), count(other, LIST)]).toEqual([2, 1]);
		const forNorth = await upload(one);
		const forSouth = await upload(one, '1002');
		advance(MINUTE);
		for (const watcher of [north, south, elsewhere]) await watcher.poll();
		expect([count(one, LIST), count(other, LIST)]).toEqual([4, 2]);
		expect(north.events.sort()).toEqual(once([forNorth]));
		expect(south.events.sort()).toEqual(once([forSouth]));
		expect(elsewhere.events).toEqual([]);
	});

	it('never take a listing from before their own starting point, nor one older than their poll interval', async () => {
		const emulator = await started();
		const early = new Watcher(emulator);
		await early.poll();
		const before = await upload(emulator);
		advance(20_000);
		// Activated after the upload: the listing of 20 s ago would report it as new.
		const late = new Watcher(emulator);
		await late.poll();
		expect(count(emulator, LIST)).toBe(2);

		// A trigger polling every 30 s takes no listing 40 s old.
		const quick = new Watcher(
			emulator,
			{},
			{
				...EVERY_MINUTE,
				pollTimes: { item: [{ mode: 'everyX', value: 30, unit: 'seconds' }] },
			},
		);
		advance(20_000);
		await quick.poll();
		expect(count(emulator, LIST)).toBe(3);

		const after = await upload(emulator);
		advance(MINUTE);
		for (const watcher of [early, late, quick]) await watcher.poll();
		expect(early.events.sort()).toEqual(once([before, after]));
		expect(late.events.sort()).toEqual(once([after]));
		expect(quick.events.sort()).toEqual(once([after]));
	});

	it('emit an upload the shared listing did not hold yet on the next poll, once', async () => {
		const emulator = await started();
		const [first, second] = [new Watcher(emulator), new Watcher(emulator)];
		await first.poll();
		await second.poll();
		advance(MINUTE);
		await first.poll();
		const between = await upload(emulator);
		advance(30_000);
		// The listing of 30 s ago, without the upload, serves.
		expect(await second.poll()).toEqual([]);
		expect(count(emulator, LIST)).toBe(2);
		advance(30_000);
		expect((await first.poll()).sort()).toEqual(once([between]));
		advance(30_000);
		expect((await second.poll()).sort()).toEqual(once([between]));
		advance(MINUTE);
		for (const watcher of [first, second]) expect(await watcher.poll()).toEqual([]);
	});

	it('lose and double nothing across midnight with a listing of yesterday taken before its last upload', async () => {
		jest.setSystemTime(Date.parse('2025-03-10T23:58:00Z'));
		const emulator = await started();
		const [first, second] = [new Watcher(emulator), new Watcher(emulator)];
		await first.poll();
		await second.poll();
		jest.setSystemTime(Date.parse('2025-03-10T23:59:30Z'));
		await first.poll();
		jest.setSystemTime(Date.parse('2025-03-10T23:59:50Z'));
		const lastOfTheDay = await upload(emulator);
		jest.setSystemTime(Date.parse('2025-03-11T00:00:20Z'));
		// Yesterday's listing of 23:59:30 serves, without the last upload; today's is listed.
		expect(await second.poll()).toEqual([]);
		const firstOfTheDay = await upload(emulator);
		for (let minute = 1; minute <= 3; minute++) {
			advance(MINUTE);
			await first.poll();
			await second.poll();
		}
		for (const watcher of [first, second])
			expect(watcher.events.sort()).toEqual(once([lastOfTheDay, firstOfTheDay]));
	});
});

describe('triggers of one account sharing status answers', () => {
	/** Two triggers, the first of which has just been told that a new upload is still processing (for 90 s). */
	async function processingHeardByFirst() {
		const emulator = await started();
		const [first, second] = [new Watcher(emulator), new Watcher(emulator)];
		await first.poll();
		await second.poll();
		const id = await upload(emulator, '1001', '<!--emulator:processing-ms=90000-->');
		advance(MINUTE);
		expect(await first.poll()).toEqual([`uploadReceived ${id}`]);
		expect(count(emulator, RESULT)).toBe(1);
		return { emulator, second, id };
	}

	it('take another\'s "still processing" only while it is seconds old: a finished session is emitted on their next poll', async () => {
		const { emulator, second, id } = await processingHeardByFirst();
		// Finished 30 s after the first trigger heard "processing": the second asks for itself.
		advance(40_000);
		expect((await second.poll()).sort()).toEqual(once([id]));
		expect(count(emulator, RESULT)).toBe(2);
		expect(count(emulator, LIST)).toBe(2);
	});

	it('share "still processing" within seconds', async () => {
		const { emulator, second, id } = await processingHeardByFirst();
		advance(2_000);
		expect(await second.poll()).toEqual([`uploadReceived ${id}`]);
		expect(count(emulator, RESULT)).toBe(1);
	});

	describe('with error messages on another host', () => {
		let documents: LocalServer;
		let front: LocalServer | undefined;
		let fetched = 0;

		beforeAll(async () => {
			documents = await listenLocal((_req, res) => {
				fetched++;
				res.writeHead(200, { 'Content-Type': 'application/json' });
				res.end(JSON.stringify({ message: 'Line 3: the element Sku is empty' }));
			});
		});

		afterEach(async () => {
			await front?.close();
			front = undefined;
			fetched = 0;
		});

		afterAll(async () => {
			await documents.close();
		});

		/** The emulator behind a front that names its error documents on the documents host. */
		async function serviceWithDocumentsElsewhere(emulator: Emulator): Promise<string> {
			front = await listenLocal((req, res) => {
				const headers: Record<string, string> = {};
				for (const name of ['authorization', 'customerid', 'customeridtype', 'accept'])
					if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
				void fetch(`${emulator.url}${req.url}`, { headers, redirect: 'manual' }).then(
					async (answer) => {
						const location = answer.headers.get('location');
						res.writeHead(answer.status, {
							'Content-Type': answer.headers.get('content-type') ?? 'text/plain',
							...(location ? { Location: `${documents.url}/errors/document.json` } : {}),
						});
						res.end(Buffer.from(await answer.arrayBuffer()));
					},
				);
			});
			return front.url;
		}

		const withMessages = (allowedInternalHosts?: string): INodeParameters => ({
			...EVERY_MINUTE,
			options: {
				includeErrorMessage: true,
				...(allowedInternalHosts === undefined ? {} : { allowedInternalHosts }),
			},
		});

		it.each([
			['the trigger that allows its host first', true],
			['the trigger that does not first', false],
		])(
			'give each trigger the message its own Allowed Internal Hosts lets it read (%s)',
			async (_order, allowedFirst) => {
				const emulator = await started();
				const baseUrl = await serviceWithDocumentsElsewhere(emulator);
				const allowed = new Watcher(
					emulator,
					{ baseUrl },
					withMessages(new URL(documents.url).host),
				);
				const refused = new Watcher(emulator, { baseUrl }, withMessages());
				const order = allowedFirst ? [allowed, refused] : [refused, allowed];
				for (const watcher of order) await watcher.poll();
				const id = await upload(emulator, '1001', '<!--emulator:fail-->');
				advance(MINUTE);
				for (const watcher of order) {
					advance(1_000);
					await watcher.poll();
				}

				const finished = (watcher: Watcher) =>
					watcher.items.find((item) => item.event === 'uploadFinished' && item.id === id);
				expect(finished(allowed)).toMatchObject({
					status: 'failed',
					errorMessage: 'Line 3: the element Sku is empty',
				});
				expect(finished(refused)).toMatchObject({ status: 'failed', errorMessage: null });
				expect(finished(refused)?.warning).toEqual(expect.any(String));
				expect(fetched).toBe(1);
				// The listing is still one request a minute for both.
				expect(count(emulator, LIST)).toBe(2);
			},
		);
	});
});

describe('triggers of one account in two processes sharing the listing through Redis', () => {
	const saved = { ...process.env };
	let redis: RedisServer;

	beforeAll(async () => {
		redis = await startRedis({ password: 'queue-password' });
		process.env.EXECUTIONS_MODE = 'queue';
		process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
		process.env.QUEUE_BULL_REDIS_PORT = String(redis.port);
		process.env.QUEUE_BULL_REDIS_PASSWORD = 'queue-password';
	});

	afterAll(async () => {
		process.env = saved;
		await storeFor({
			host: '127.0.0.1',
			port: redis.port,
			db: 0,
			password: 'queue-password',
		}).close();
		await redis.stop();
	});

	it('list the day once for triggers in two processes, each emitting every upload once', async () => {
		// Another n8n main: the package loaded anew, with its own memory of this process's answers.
		let otherProcess: ProductDataIntegrationTrigger | undefined;
		await jest.isolateModulesAsync(async () => {
			const { ProductDataIntegrationTrigger: Loaded } = await import(
				'../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node'
			);
			otherProcess = new Loaded();
		});
		const emulator = await started();
		const here = new Watcher(emulator);
		const there = new Watcher(
			emulator,
			{},
			EVERY_MINUTE,
			otherProcess as ProductDataIntegrationTrigger,
		);
		await here.poll();
		await there.poll();
		expect(count(emulator, LIST)).toBe(1);
		const ids = [await upload(emulator)];
		advance(MINUTE);
		await here.poll();
		advance(5_000);
		await there.poll();
		ids.push(await upload(emulator));
		advance(MINUTE);
		await there.poll();
		advance(5_000);
		await here.poll();
		expect(count(emulator, LIST)).toBe(3);
		expect(count(emulator, RESULT)).toBe(2);
		for (const watcher of [here, there]) expect(watcher.events.sort()).toEqual(once(ids));

		// What Redis keeps of them lives a minute at most and names no account.
		const client = new Redis({ host: '127.0.0.1', port: redis.port, password: 'queue-password' });
		try {
			const keys = await client.keys('*:answers:*');
			expect(keys.length).toBeGreaterThan(0);
			for (const key of keys) {
				expect(key).not.toContain(DEFAULT_ACCOUNT.username);
				const lifetime = await client.pttl(key);
				expect(lifetime).toBeGreaterThan(0);
				expect(lifetime).toBeLessThanOrEqual(60_000);
			}
		} finally {
			client.disconnect();
		}
	});
});

async function until(what: string, condition: () => boolean): Promise<void> {
	for (let tries = 0; !condition(); tries++) {
		if (tries === 200) throw new Error(`Timed out waiting for ${what}`);
		await sleep(50);
	}
}

describe('shared answers when the Redis of queue mode cannot be asked', () => {
	const saved = { ...process.env };

	afterAll(() => {
		process.env = saved;
	});

	it('are shared within the process, and the Redis that is away is not asked again at every answer', async () => {
		process.env.EXECUTIONS_MODE = 'queue';
		process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
		process.env.QUEUE_BULL_REDIS_PORT = String(await freePort());
		const emulator = await started();
		const context = createPollContext({
			credentials: { baseUrl: emulator.url, username: 'user', password: 'secret' },
		});
		let asked = 0;
		const ask = async () => ({ answer: ++asked });
		const freshness = (poller: string) => ({ notBefore: 0, maxAgeMs: MINUTE, poller });
		expect(await sharedAnswer(context, undefined, ['x'], freshness('one'), ask)).toEqual({
			value: { answer: 1 },
			askedAt: Date.now(),
		});
		expect((await sharedAnswer(context, undefined, ['x'], freshness('two'), ask)).value).toEqual({
			answer: 1,
		});
		expect(asked).toBe(1);
		// Another answer a moment later: Redis, away a moment ago, is not asked again.
		await sharedAnswer(context, undefined, ['y'], freshness('one'), ask);
		expect(asked).toBe(2);
		expect(context.logged.filter((line) => line.includes('Redis could not be asked'))).toHaveLength(
			1,
		);
	});

	it('are handed out while their write to Redis hangs, and the write that fails leaves Redis alone for a while', async () => {
		let reads = 0;
		const writes: string[] = [];
		const redis = await startScriptedRedis(([, script, , key]) => {
			if (!script.includes("'SET'")) {
				reads++;
				return '';
			}
			writes.push(key);
			return undefined;
		});
		process.env.EXECUTIONS_MODE = 'queue';
		process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
		process.env.QUEUE_BULL_REDIS_PORT = String(redis.port);
		try {
			const emulator = await started();
			const context = createPollContext({
				credentials: { baseUrl: emulator.url, username: 'user', password: 'secret' },
			});
			const unshared = () =>
				context.logged.filter((line) => line.includes('could not be shared through Redis'));
			const freshness = { notBefore: 0, maxAgeMs: MINUTE, poller: 'one' };
			expect(
				(await sharedAnswer(context, undefined, ['x'], freshness, async () => 'the answer')).value,
			).toBe('the answer');
			expect(unshared()).toEqual([]);
			await until('the write to fail', () => unshared().length === 1);
			expect(reads).toBe(1);
			expect(writes).toHaveLength(1);
			// Another answer a moment later: Redis, whose write failed, is not asked.
			await sharedAnswer(context, undefined, ['y'], freshness, async () => 'another');
			expect(reads).toBe(1);
			expect(writes).toHaveLength(1);
		} finally {
			await closeStores();
			await redis.close();
		}
	});
});
