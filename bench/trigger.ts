/**
 * A simulated day of the polling trigger against the emulator: uploads arrive at random times
 * (some failing), the trigger is polled every minute as an active n8n workflow would poll it (the
 * in-process harness runs n8n-core's poll executor), its static data goes through JSON between
 * polls, and twice a day n8n "restarts" from the static data it last saved. Prints one JSON line:
 *   {"triggers","sessions","events","duplicates","missed","requests","requests_per_session",
 *    "requests_per_event","list_requests_per_day"}
 * where requests are the triggers' own requests (lists, status checks), not the uploads; on stderr
 * the details, among them max_static_data_bytes, the largest static data a poll left (what n8n
 * saves after each poll on its durable scheduler).
 *
 * Time is simulated: Date.now is replaced by a clock that the bench moves, and the emulator reads
 * the same clock. So the trigger's dates, the emulator's receivedAt and processing times, and both
 * leaky buckets (the emulator's and the node's limiter) all run on simulated time, with the
 * service's real terms (50 requests at once, then 1 per 5 s): whatever the trigger asks of the
 * bucket over a simulated minute is what it would ask of the real service. The clock does not move
 * during a poll, so a poll that had to wait for the limiter would wait forever; a watchdog reports
 * that instead (it would mean the trigger spends more than the bucket holds).
 *
 * Listing costs one request per poll whatever happens, so requests per session depend on how many
 * uploads one poll interval sees. The defaults model a busy day (2000 uploads, about 1.4 per poll);
 * with fewer uploads the list requests dominate (e.g. BENCH_SESSIONS=200: about 8 per session).
 *
 * BENCH_TRIGGERS=5: five triggers on the account, each with its own static data, sharing its
 * listing and status answers, and beside them one trigger on another account (its own emulator)
 * that sees the same uploads; the line then holds both summaries, {"shared":{...},"other":{...}}.
 *   BENCH_SESSIONS (2000)  BENCH_HOURS (24)  BENCH_POLL_SECONDS (60)  BENCH_FAIL_RATE (0.2)
 *   BENCH_MAX_PROCESSING_SECONDS (50, keep it below the poll interval)  BENCH_SEED (1)
 *   BENCH_TRIGGERS (1)
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

// '.node.js' because tsx would resolve '.node' to the codex file next to it (.node.json).
import { ProductDataIntegrationTrigger } from '../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node.js';
import { DEFAULT_ACCOUNT, startEmulator, type Emulator } from '../scripts/emulator';
import { emulatorCredentials, runPoll } from '../scripts/n8n/in-process';

function setting(name: string, fallback: number): number {
	const raw = process.env[name];
	const value = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
	if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0`);
	return value;
}

const SESSIONS = Math.floor(setting('BENCH_SESSIONS', 2000));
const HOURS = setting('BENCH_HOURS', 24);
const POLL_MS = setting('BENCH_POLL_SECONDS', 60) * 1000;
const FAIL_RATE = setting('BENCH_FAIL_RATE', 0.2);
const MAX_PROCESSING_MS = setting('BENCH_MAX_PROCESSING_SECONDS', 50) * 1000;
const SEED = Math.floor(setting('BENCH_SEED', 1));
const TRIGGERS = Math.max(1, Math.floor(setting('BENCH_TRIGGERS', 1)));
/** Polls after the day for the last sessions to finish. */
const DRAIN_POLLS = 30;
const WATCHDOG_MS = 60_000;

// The day starts at noon, so that midnight (UTC, the service's dates) falls in the middle of it.
const START = Date.parse('2025-03-10T12:00:00Z');
let simulated = START;
Date.now = () => simulated;

const UPLOAD = 'PUT /api/xml';
const RESULT = 'GET /api/status/{id}/result';
const LIST = 'GET /api/xml/{date}';

function random(): number {
	// A small LCG: the same seed gives the same day.
	randomState = (randomState * 1103515245 + 12345) % 2 ** 31;
	return randomState / 2 ** 31;
}
let randomState = SEED;

interface PlannedUpload {
	at: number;
	processingMs: number;
	fail: boolean;
}

function planDay(): PlannedUpload[] {
	const span = HOURS * 3_600_000;
	const plan: PlannedUpload[] = [];
	for (let i = 0; i < SESSIONS; i++) {
		plan.push({
			at: START + 1 + Math.floor(random() * (span - 1)),
			processingMs: Math.floor(random() * MAX_PROCESSING_MS),
			fail: random() < FAIL_RATE,
		});
	}
	return plan.sort((a, b) => a.at - b.at);
}

async function upload(emulator: Emulator, planned: Omit<PlannedUpload, 'at'>): Promise<string> {
	const auth = Buffer.from(`${DEFAULT_ACCOUNT.username}:${DEFAULT_ACCOUNT.password}`).toString(
		'base64',
	);
	const markers = `<!--emulator:processing-ms=${planned.processingMs}-->${planned.fail ? '<!--emulator:fail-->' : ''}`;
	const response = await fetch(`${emulator.url}/api/xml`, {
		method: 'PUT',
		headers: {
			Authorization: `Basic ${auth}`,
			customerId: '1001',
			customerIdType: 'ServiceID',
			'Content-Type': 'application/xml',
		},
		body: `<?xml version="1.0" encoding="UTF-8"?>${markers}<Products><Product><Id>1</Id></Product></Products>`,
	});
	const text = (await response.text()).trim();
	if (response.status !== 202) throw new Error(`Upload refused (${response.status}): ${text}`);
	return text;
}

function trackedRequests(emulator: Emulator): number {
	const { requests } = emulator.stats();
	return Object.entries(requests).reduce(
		(sum, [key, count]) => (key === UPLOAD ? sum : sum + count),
		0,
	);
}

async function withWatchdog<T>(work: Promise<T>): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const watchdog = new Promise<never>((_, reject) => {
		timer = setTimeout(
			() =>
				reject(new Error('A poll did not finish: it waited for the rate limit on a stopped clock')),
			WATCHDOG_MS,
		);
	});
	try {
		return await Promise.race([work, watchdog]);
	} finally {
		clearTimeout(timer);
	}
}

/** One trigger as n8n keeps it: the static data of its last poll, and the copy n8n last saved. */
interface Watcher {
	staticData: IDataObject;
	savedByN8n: IDataObject;
	emitted: Map<string, number>;
}

/** An account (its own emulator: a new address is a new account) and the triggers watching it. */
interface Account {
	emulator: Emulator;
	credentials: ReturnType<typeof emulatorCredentials>;
	watchers: Watcher[];
	expected: Map<string, 'succeeded' | 'failed'>;
}

const trigger = new ProductDataIntegrationTrigger();
const parameters: INodeParameters = {
	events: ['uploadFinished'],
	status: 'any',
	pollTimes: { item: [{ mode: 'everyX', value: POLL_MS / 60_000, unit: 'minutes' }] },
};
let events = 0;
let wrongStatus = 0;
let maxPerPoll = 0;
let maxChecksPerPoll = 0;
let maxStaticDataBytes = 0;
let polls = 0;

async function startAccount(triggers: number): Promise<Account> {
	const emulator = await startEmulator({ now: () => Date.now() });
	// Uploads from before the triggers were activated: history, never to be reported.
	simulated = START - 3_600_000;
	for (let i = 0; i < 5; i++) await upload(emulator, { processingMs: 0, fail: false });
	simulated = START;
	return {
		emulator,
		credentials: emulatorCredentials(emulator),
		watchers: Array.from({ length: triggers }, () => ({
			staticData: {},
			savedByN8n: {},
			emitted: new Map<string, number>(),
		})),
		expected: new Map(),
	};
}

async function pollOnce(account: Account, watcher: Watcher, activation = false): Promise<void> {
	const { emulator } = account;
	const before = trackedRequests(emulator);
	const checksBefore = emulator.stats().requests[RESULT] ?? 0;
	const result = await withWatchdog(
		runPoll(trigger, parameters, account.credentials, watcher.staticData),
	);
	if (result.error) throw result.error;
	polls++;
	maxPerPoll = Math.max(maxPerPoll, trackedRequests(emulator) - before);
	maxChecksPerPoll = Math.max(
		maxChecksPerPoll,
		(emulator.stats().requests[RESULT] ?? 0) - checksBefore,
	);
	maxStaticDataBytes = Math.max(maxStaticDataBytes, JSON.stringify(result.staticData).length);
	for (const item of result.output?.[0] ?? []) {
		const id = String(item.json.id);
		events++;
		watcher.emitted.set(id, (watcher.emitted.get(id) ?? 0) + 1);
		if (account.expected.get(id) !== item.json.status) wrongStatus++;
	}
	watcher.staticData = result.staticData;
	// n8n saves static data after activating, later perhaps only along with an emitted execution;
	// after a restart the trigger reads back that copy, not the newest.
	if (activation || result.output !== null) watcher.savedByN8n = result.staticData;
}

/** What one account's triggers cost it and whether each emitted every session exactly once. */
function summary(account: Account, days: number): IDataObject {
	const { expected, watchers, emulator } = account;
	let duplicates = 0;
	let missed = 0;
	let emittedEvents = 0;
	for (const { emitted } of watchers) {
		for (const [id, count] of emitted) {
			emittedEvents += count;
			duplicates += expected.has(id) ? count - 1 : count;
		}
		missed += [...expected.keys()].filter((id) => !emitted.has(id)).length;
	}
	const requests = trackedRequests(emulator);
	const lists = emulator.stats().requests[LIST] ?? 0;
	const sessions = expected.size;
	const ratio = (value: number, of: number) =>
		of === 0 ? 0 : Math.round((value / of) * 1000) / 1000;
	return {
		triggers: watchers.length,
		sessions,
		events: emittedEvents,
		duplicates,
		missed,
		requests,
		requests_per_session: ratio(requests, sessions),
		requests_per_event: ratio(requests, emittedEvents),
		list_requests_per_day: Math.round(lists / days),
	};
}

async function main(): Promise<void> {
	const realStart = performance.now();
	const accounts = [await startAccount(TRIGGERS)];
	if (TRIGGERS > 1) accounts.push(await startAccount(1));
	try {
		const plan = planDay();
		for (const account of accounts)
			for (const watcher of account.watchers) await pollOnce(account, watcher, true);
		const restarts = [START + (HOURS * 3_600_000) / 4, START + (HOURS * 3_600_000 * 3) / 4];
		const end = START + HOURS * 3_600_000;
		const everyoneEmittedAll = () =>
			accounts.every(({ expected, watchers }) =>
				watchers.every(({ emitted }) => [...expected.keys()].every((id) => emitted.has(id))),
			);
		let next = 0;
		let pollAt = START + POLL_MS;
		for (; pollAt <= end + DRAIN_POLLS * POLL_MS; pollAt += POLL_MS) {
			for (; next < plan.length && plan[next].at < pollAt; next++) {
				simulated = plan[next].at;
				for (const account of accounts) {
					const id = await upload(account.emulator, plan[next]);
					account.expected.set(id, plan[next].fail ? 'failed' : 'succeeded');
				}
			}
			simulated = pollAt;
			const restart = restarts.length > 0 && pollAt >= restarts[0];
			if (restart) restarts.shift();
			for (const account of accounts) {
				for (const watcher of account.watchers) {
					if (restart) watcher.staticData = watcher.savedByN8n;
					await pollOnce(account, watcher);
				}
			}
			if (pollAt >= end && everyoneEmittedAll()) break;
		}

		const days = (Math.min(pollAt, end + DRAIN_POLLS * POLL_MS) - START) / 86_400_000;
		const [watched, other] = accounts.map((account) => summary(account, days));
		process.stdout.write(`${JSON.stringify(other ? { shared: watched, other } : watched)}\n`);
		const stats = accounts.map(({ emulator }) => emulator.stats());
		const sum = (read: (stat: (typeof stats)[number]) => number) =>
			stats.reduce((total, stat) => total + read(stat), 0);
		process.stderr.write(
			`${JSON.stringify({
				polls,
				list_requests: sum((stat) => stat.requests[LIST] ?? 0),
				status_requests: sum((stat) => stat.requests[RESULT] ?? 0),
				max_requests_per_poll: maxPerPoll,
				max_status_requests_per_poll: maxChecksPerPoll,
				// What n8n saves after a poll: the trigger's state, as JSON.
				max_static_data_bytes: maxStaticDataBytes,
				wrong_status: wrongStatus,
				rejected429: sum((stat) => stat.rejected429),
				peak_bucket_level: Math.max(...stats.map((stat) => stat.peakBucketLevel)),
				events,
				real_seconds: Math.round((performance.now() - realStart) / 100) / 10,
			})}\n`,
		);
		const failed = [watched, other].some(
			(result) => result && (Number(result.duplicates) > 0 || Number(result.missed) > 0),
		);
		if (failed || wrongStatus > 0) process.exitCode = 1;
	} finally {
		for (const { emulator } of accounts) await emulator.close();
	}
}

main().catch((error: unknown) => {
	process.stderr.write(
		`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
	);
	process.exit(1);
});
