import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegrationTrigger } from '../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node';
import { clearLoggedLines, emulatorCredentials, runPoll } from '../../scripts/n8n/in-process';
import { listenLocal, type LocalServer } from '../helpers/server';

/**
 * What the trigger keeps and logs stays bounded however much a date's listing holds: a service that
 * lists tens of thousands of uploads a day.
 */

const trigger = new ProductDataIntegrationTrigger();
const RECEIVED: INodeParameters = { events: ['uploadReceived'] };

let server: LocalServer;
let listed: IDataObject[];
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
	listed = [];
	start = Date.now() - 60_000;
	server = await listenLocal((req, res) => {
		const path = req.url ?? '';
		if (path.startsWith('/api/xml/')) {
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify(listed));
		} else if (path.endsWith('/result')) {
			res.writeHead(202, { 'Content-Type': 'text/plain' }).end('Still processing');
		} else {
			res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"message":"Not found"}');
		}
	});
	clearLoggedLines();
});

afterEach(async () => {
	await server.close();
});

async function poll(parameters: INodeParameters, staticData: IDataObject): Promise<{ ids: string[]; staticData: IDataObject }> {
	const result = await runPoll(trigger, parameters, emulatorCredentials(server), staticData);
	if (result.error) throw result.error;
	return { ids: (result.output?.[0] ?? []).map((item) => item.json.id as string), staticData: result.staticData };
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
});
