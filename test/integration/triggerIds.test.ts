import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegrationTrigger } from '../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node';
import {
	clearLoggedLines,
	emulatorCredentials,
	getLoggedLines,
	runPoll,
} from '../../scripts/n8n/in-process';
import { listenLocal, type LocalServer } from '../helpers/server';

/**
 * Ids the trigger takes from the service's list of uploads: only session ids are followed, and no
 * id reaches a property of an object (the trigger's state, or Object.prototype through it).
 */

const trigger = new ProductDataIntegrationTrigger();
const HOSTILE_IDS = ['__proto__', 'constructor', 'toString', '.', '..', 'hasOwnProperty', ''];
const FIRST = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
const SECOND = '{7C9E6679-7425-40DE-944B-E07FC1F90AE7}';
const PARAMETERS: INodeParameters = { events: ['uploadFinished', 'uploadReceived'], status: 'any' };

let server: LocalServer;
let listed: IDataObject[];
let requested: string[];
const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();

function uploadRecord(id: string): IDataObject {
	return {
		id,
		receivedAt: new Date().toISOString(),
		fileLenght: 10,
		sentBy: { serviceId: 1001 },
		errors: [],
	};
}

beforeEach(async () => {
	listed = [];
	requested = [];
	server = await listenLocal((req, res) => {
		const path = decodeURIComponent(req.url ?? '');
		requested.push(path);
		if (path.startsWith('/api/xml/')) {
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify(listed));
		} else if (path.endsWith('/result')) {
			res.writeHead(200).end();
		} else {
			res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"message":"Not found"}');
		}
	});
	clearLoggedLines();
});

afterEach(async () => {
	await server.close();
	// Should a change let the pollution through, the test fails, and later tests must not inherit it.
	for (const key of Object.getOwnPropertyNames(Object.prototype)) {
		if (!prototypeKeys.includes(key)) delete (Object.prototype as Record<string, unknown>)[key];
	}
});

async function poll(staticData: IDataObject): Promise<{ ids: unknown[]; staticData: IDataObject }> {
	const result = await runPoll(trigger, PARAMETERS, emulatorCredentials(server), staticData);
	if (result.error) throw result.error;
	return {
		ids: (result.output?.[0] ?? []).map((item) => [item.json.id, item.json.event]),
		staticData: result.staticData,
	};
}

describe('the trigger and the ids the service lists', () => {
	it('follows only session ids, warns once per other id, and leaves Object.prototype alone', async () => {
		const first = await poll({});
		listed = [
			...HOSTILE_IDS.map(uploadRecord),
			uploadRecord(FIRST),
			{ receivedAt: new Date().toISOString() },
		];

		const second = await poll(first.staticData);
		expect(second.ids).toEqual([
			[FIRST, 'uploadReceived'],
			[FIRST, 'uploadFinished'],
		]);
		expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
		// Nothing but the listing and the one session's status was asked for.
		expect(requested.filter((path) => path.startsWith('/api/status/'))).toEqual([
			`/api/status/${FIRST}/result`,
		]);

		// The same records listed again, and a new session: later polls go on as before.
		listed.push(uploadRecord(SECOND));
		const third = await poll(second.staticData);
		expect(third.ids).toEqual([
			[SECOND, 'uploadReceived'],
			[SECOND, 'uploadFinished'],
		]);
		const fourth = await poll(third.staticData);
		expect(fourth.ids).toEqual([]);
		expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
		expect(JSON.stringify(fourth.staticData)).not.toMatch(/__proto__|constructor|toString|"\.\.?"/);

		const warnings = getLoggedLines().filter((line) => line.includes('is not followed'));
		expect(warnings).toHaveLength(HOSTILE_IDS.length + 1);
		for (const id of HOSTILE_IDS) {
			expect(
				warnings.filter((line) =>
					line.includes(`with the id ${JSON.stringify(id)} is not followed`),
				),
			).toHaveLength(1);
		}
	});

	it('names few ids per poll when the service lists many that are not session ids', async () => {
		const first = await poll({});
		listed = Array.from({ length: 40 }, (_, index) => uploadRecord(`upload-${index}`));
		await poll(first.staticData);
		const warnings = getLoggedLines().filter((line) => line.includes('not followed'));
		expect(warnings).toHaveLength(11);
		expect(warnings.at(-1)).toContain(
			'30 more uploads listed with ids that are not session ids are not followed',
		);
	});
});
