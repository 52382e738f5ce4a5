import type { IDataObject, INodeParameters, IPollFunctions } from 'n8n-workflow';

import { ProductDataIntegrationTrigger } from '../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node';
import { pollUploads } from '../../nodes/ProductDataIntegrationTrigger/poll';
import {
	clearLoggedLines,
	createPollContext,
	emulatorCredentials,
	getLoggedLines,
	NODE_NAME,
	runPoll,
} from '../../scripts/n8n/in-process';
import { fakeDateOnly } from '../helpers/clock';
import { listenLocal, type LocalServer } from '../helpers/server';

/**
 * What the trigger keeps and logs stays bounded however much a date's listing holds: a service that
 * lists tens of thousands of uploads a day, or thousands of new ones in one poll.
 */

// Polls that list up to 80,000 uploads: seconds of work each on a busy machine.
jest.setTimeout(120_000);

const trigger = new ProductDataIntegrationTrigger();
const RECEIVED: INodeParameters = { events: ['uploadReceived'] };
const FINISHED: INodeParameters = { events: ['uploadFinished'], status: 'any' };

let server: LocalServer;
let listed: IDataObject[];
let statusChecks: number;
/** Status checks get no answer: a poll waits for them until its deadline. */
let checksHang: boolean;
/** When the first upload of a test was received. */
let start: number;

/** A session id for upload number `n`. */
function sessionId(n: number): string {
	return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

/** Uploads number `from` up to `to` (excluded), received a millisecond apart, oldest first. */
function uploads(from: number, to: number): IDataObject[] {
	return Array.from({ length: to - from }, (_, index) => ({
		id: sessionId(from + index),
		receivedAt: new Date(start + from + index).toISOString(),
		fileLenght: 10,
		errors: [],
	}));
}

beforeEach(async () => {
	// Midday: the fake service lists the same uploads for every date, so a poll that crossed
	// midnight would list them twice, once as yesterday's.
	fakeDateOnly(Date.parse('2025-03-10T12:00:00Z'));
	listed = [];
	statusChecks = 0;
	checksHang = false;
	start = Date.now() - 60_000;
	server = await listenLocal((req, res) => {
		const path = req.url ?? '';
		if (path.startsWith('/api/xml/')) {
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify(listed));
		} else if (path.endsWith('/result')) {
			statusChecks++;
			if (checksHang) return;
			res.writeHead(202, { 'Content-Type': 'text/plain' }).end('Still processing');
		} else {
			res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"message":"Not found"}');
		}
	});
	clearLoggedLines();
});

afterEach(async () => {
	await server.close();
	jest.useRealTimers();
});

async function poll(
	parameters: INodeParameters,
	staticData: IDataObject,
): Promise<{ ids: string[]; staticData: IDataObject }> {
	jest.setSystemTime(Date.now() + 1_000);
	const result = await runPoll(trigger, parameters, emulatorCredentials(server), staticData);
	if (result.error) throw result.error;
	return {
		ids: (result.output?.[0] ?? []).map((item) => item.json.id as string),
		staticData: result.staticData,
	};
}

function pendingIds(staticData: IDataObject): string[] {
	const state = staticData[`node:${NODE_NAME}`] as IDataObject;
	return (state.pending as Array<{ id: string }>).map(({ id }) => id);
}

describe('the trigger’s bounds', () => {
	it('keeps at most 5,000 ids of a date, still knows the ones it dropped, and its static data stays small', async () => {
		let { staticData } = await poll(RECEIVED, {});
		const sizes: number[] = [];
		for (let round = 1; round <= 4; round++) {
			// The service lists the whole date each time: 20,000 more uploads per poll.
			listed = uploads(0, round * 20_000);
			const result = await poll(RECEIVED, staticData);
			// Each upload is reported once: those whose ids were dropped are not reported again.
			expect(result.ids).toHaveLength(20_000);
			expect(result.ids[0]).toBe(sessionId((round - 1) * 20_000));
			staticData = result.staticData;
			sizes.push(Buffer.byteLength(JSON.stringify(staticData)));
		}
		// 5,000 ids of 36 characters, quoted and separated: about 195 KB, whatever the listing holds.
		expect(Math.max(...sizes)).toBeLessThan(200 * 1024);
		expect(sizes[3]).toBeLessThanOrEqual(sizes[0]);

		listed.push(...uploads(80_000, 80_001));
		expect((await poll(RECEIVED, staticData)).ids).toEqual([sessionId(80_000)]);
	});

	/** Follows uploads 0-2, then takes a listing of 2,500 more new ones; returns the poll of that listing. */
	async function oversizedListing(): Promise<{ ids: string[]; staticData: IDataObject }> {
		const { staticData } = await poll(FINISHED, {});
		listed = uploads(0, 3);
		const before = await poll(FINISHED, staticData);
		expect(pendingIds(before.staticData)).toEqual([0, 1, 2].map(sessionId));
		listed = uploads(0, 2_503);
		clearLoggedLines();
		return await poll(FINISHED, before.staticData);
	}

	it('follows at most 2,000 sessions: a listing beyond that never evicts those already followed', async () => {
		const pending = pendingIds((await oversizedListing()).staticData);
		expect(pending).toHaveLength(2_000);
		expect(pending.slice(0, 3)).toEqual([0, 1, 2].map(sessionId));
		// The oldest of the new sessions are followed; the 503 newest are not.
		expect(pending).toContain(sessionId(1_999));
		expect(pending).not.toContain(sessionId(2_000));
		expect(statusChecks).toBeGreaterThan(0);
	});

	it('says in one log line per poll which sessions it does not follow', async () => {
		await oversizedListing();
		const lines = getLoggedLines().filter((line) => line.includes('followed'));
		expect(lines).toHaveLength(1);
		expect(lines[0]).toContain('503 new upload sessions are not followed');
		expect(lines[0]).toContain(sessionId(2_000));
		expect(lines[0].length).toBeLessThan(400);
	});

	it('ends a poll stopped at its deadline as stopped, without counting it against the session checked then', async () => {
		const { staticData } = await poll(FINISHED, {});
		listed = uploads(0, 1);
		const followed = await poll(FINISHED, staticData);
		const nodeData = followed.staticData[`node:${NODE_NAME}`] as IDataObject;
		// Checked long ago, so the session is due whatever time the polls above took.
		for (const session of nodeData.pending as IDataObject[]) {
			session.firstSeen = start;
			session.lastChecked = start;
		}
		checksHang = true;
		const context = createPollContext({
			credentials: { ...emulatorCredentials(server), requestTimeoutSeconds: 600 },
			nodeParameters: { pollTimes: { item: [{ mode: 'everyMinute' }] } },
		}) as ReturnType<typeof createPollContext> & Record<string, unknown>;
		context.getPollBudgetMs = () => 1_000;
		context.getWorkflow = () => ({ id: 'bounds-workflow', active: true });
		const workflowData: IDataObject = {};
		context.getWorkflowStaticData = (type: string) => (type === 'node' ? nodeData : workflowData);
		const settings = {
			uploadReceived: false,
			uploadFinished: true,
			status: 'any' as const,
			includeErrorMessage: false,
			maxChecks: 8,
		};

		await expect(pollUploads(context as unknown as IPollFunctions, settings)).rejects.toThrow(
			/^The poll was stopped after 1 s/,
		);
		expect(nodeData.pending).toEqual([
			expect.not.objectContaining({ failedChecks: expect.anything() }),
		]);
		expect(pendingIds(followed.staticData)).toEqual([sessionId(0)]);
	});
});
