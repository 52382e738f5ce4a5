import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { listDate } from '../../nodes/ProductDataIntegration/actions/document/getMany.operation';
import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import type { Emulator, ListLayout } from '../../scripts/emulator';
import { runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, fastCredentials, startedEmulators } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';

const node = new ProductDataIntegration();
const DAY = '2024-05-31';

function getMany(parameters: IDataObject): INodeParameters {
	return { resource: 'document', operation: 'getMany', ...parameters } as INodeParameters;
}

function uploadText(xml: string, customer?: string): INodeParameters {
	return {
		resource: 'document',
		operation: 'upload',
		source: 'text',
		xml,
		options: customer ? { customer } : {},
	} as INodeParameters;
}

describe('Document: Get Many', () => {
	const startEmulator = startedEmulators();
	const emulators = new Map<ListLayout, Emulator>();

	async function emulatorWith(layout: ListLayout): Promise<Emulator> {
		let emulator = emulators.get(layout);
		if (!emulator) {
			emulator = await startEmulator({ ...FAST_BUCKET, listLayout: layout });
			emulators.set(layout, emulator);
		}
		emulator.reset();
		emulator.clock.set(Date.parse(`${DAY}T12:00:00Z`));
		return emulator;
	}

	async function uploadDocuments(
		emulator: Emulator,
		count: number,
		customer?: string,
	): Promise<string[]> {
		const ids: string[] = [];
		for (let index = 0; index < count; index++) {
			const { output, error } = await runNode({
				node,
				parameters: uploadText(
					`<Products><Product><Sku>${index}</Sku></Product></Products>`,
					customer,
				),
				credentials: fastCredentials(emulator),
			});
			expect(error).toBeUndefined();
			ids.push(output[0][0].json.sessionId as string);
		}
		return ids;
	}

	it('outputs one item per uploaded document of the day, fields as the service sends them', async () => {
		const emulator = await emulatorWith('array');
		const ids = await uploadDocuments(emulator, 3);

		const { output, error } = await runNode({
			node,
			parameters: getMany({ date: DAY, returnAll: true }),
			credentials: fastCredentials(emulator),
		});

		expect(error).toBeUndefined();
		expect(output[0].map(({ json }) => json.id)).toEqual(ids);
		expect(output[0].every(({ pairedItem }) => JSON.stringify(pairedItem) === '{"item":0}')).toBe(
			true,
		);
		expect(output[0][0].json).toEqual({
			id: ids[0],
			receivedAt: '2024-05-31T12:00:00.000+00:00',
			fileLenght: expect.any(Number),
			sentBy: { name: 'North Shop', serviceId: 1001, externalId: 'SHOP-NORTH' },
			file: expect.stringContaining(ids[0]),
			result: `${emulator.url}/api/status/${ids[0]}/result`,
			errors: [],
			fileLength: output[0][0].json.fileLenght,
			listedDate: DAY,
		});
		expect(emulator.stats().requests['GET /api/xml/{date}']).toBe(1);
	});

	it('stops at the limit', async () => {
		const emulator = await emulatorWith('array');
		const ids = await uploadDocuments(emulator, 3);

		const { output } = await runNode({
			node,
			parameters: getMany({ date: DAY, returnAll: false, limit: 2 }),
			credentials: fastCredentials(emulator),
		});

		expect(output[0].map(({ json }) => json.id)).toEqual(ids.slice(0, 2));
	});

	it('accepts a single record instead of a list', async () => {
		const emulator = await emulatorWith('single');
		const [id] = await uploadDocuments(emulator, 1);

		const { output, error } = await runNode({
			node,
			parameters: getMany({ date: DAY, returnAll: true }),
			credentials: fastCredentials(emulator),
		});

		expect(error).toBeUndefined();
		expect(output[0]).toHaveLength(1);
		expect(output[0][0].json.id).toBe(id);
	});

	it('outputs nothing for a day without uploads', async () => {
		const emulator = await emulatorWith('array');
		await uploadDocuments(emulator, 1);

		const { output, error } = await runNode({
			node,
			parameters: getMany({ date: '2024-05-30', returnAll: true }),
			credentials: fastCredentials(emulator),
		});

		expect(error).toBeUndefined();
		expect(output).toEqual([[]]);
	});

	it('lists the uploads of the chosen customer', async () => {
		const emulator = await emulatorWith('array');
		await uploadDocuments(emulator, 1);
		const [south] = await uploadDocuments(emulator, 1, '1002');

		const { output } = await runNode({
			node,
			parameters: getMany({ date: DAY, returnAll: true, options: { customer: '1002' } }),
			credentials: fastCredentials(emulator),
		});

		expect(output[0].map(({ json }) => json.id)).toEqual([south]);
	});

	it('lists per input item, each with its own date', async () => {
		const emulator = await emulatorWith('array');
		const [id] = await uploadDocuments(emulator, 1);

		const { output, error } = await runNode({
			node,
			parameters: getMany({ date: '={{ $json.day }}', returnAll: true }),
			items: [{ json: { day: '2024-05-30' } }, { json: { day: `${DAY}T23:30:00` } }],
			credentials: fastCredentials(emulator),
		});

		expect(error).toBeUndefined();
		expect(output[0]).toEqual([{ json: expect.objectContaining({ id }), pairedItem: { item: 1 } }]);
		expect(emulator.stats().requests['GET /api/xml/{date}']).toBe(2);
	});

	it('lists a day once for all items that ask for the same day and customer', async () => {
		const emulator = await emulatorWith('array');
		const [north] = await uploadDocuments(emulator, 1);
		const [south] = await uploadDocuments(emulator, 1, '1002');

		const { output, error } = await runNode({
			node,
			parameters: getMany({
				date: DAY,
				returnAll: true,
				options: { customer: '={{ $json.customer }}' },
			}),
			items: [
				{ json: { customer: '' } },
				{ json: { customer: '1002' } },
				{ json: { customer: '' } },
			],
			credentials: fastCredentials(emulator),
		});

		expect(error).toBeUndefined();
		expect(output[0].map(({ json, pairedItem }) => [json.id, pairedItem])).toEqual([
			[north, { item: 0 }],
			[south, { item: 1 }],
			[north, { item: 2 }],
		]);
		expect(output[0][0].json.sentBy).not.toBe(output[0][2].json.sentBy);
		expect(emulator.stats().requests['GET /api/xml/{date}']).toBe(2);
	});

	it('names the field and the item of an invalid date before any request', async () => {
		const emulator = await emulatorWith('array');

		const { error } = await runNode({
			node,
			parameters: getMany({ date: '={{ $json.day }}', returnAll: true }),
			items: [{ json: { day: '2024-05-31' } }, { json: { day: '31.05.2024' } }],
			credentials: fastCredentials(emulator),
		});

		expect(error?.message).toBe('The Date of item 1 is not a valid date: "31.05.2024"');
		expect(error?.description).toContain('2024-05-31');
		expect(emulator.stats().requests['GET /api/xml/{date}']).toBe(1);
	});

	it('turns an invalid date into an error item under continue on fail', async () => {
		const emulator = await emulatorWith('array');

		const { output } = await runNode({
			node,
			parameters: getMany({ date: '2024-02-30', returnAll: true }),
			credentials: fastCredentials(emulator),
			continueOnFail: true,
		});

		expect(output[0]).toEqual([
			{
				json: expect.objectContaining({
					error: 'The Date of item 0 is not a valid date: "2024-02-30"',
				}),
				pairedItem: { item: 0 },
			},
		]);
		expect(emulator.stats().requests).toEqual({});
	});
});

describe('Document: Get Many, answers the emulator does not give', () => {
	let server: LocalServer;
	let reply: { status: number; body: string } = { status: 200, body: '' };
	let asked: string[] = [];

	beforeAll(async () => {
		server = await listenLocal((req, res) => {
			asked.push(req.url ?? '');
			res.writeHead(reply.status, { 'Content-Type': 'application/json' });
			res.end(reply.status === 204 ? undefined : reply.body);
		});
	});

	afterAll(async () => {
		await server.close();
	});

	it.each([
		['204 without a body', { status: 204, body: '' }, 0],
		['200 with an empty body', { status: 200, body: '' }, 0],
		['null', { status: 200, body: 'null' }, 0],
		['one record', { status: 200, body: '{"id":"x"}' }, 1],
	])('reads %s', async (_, answer, count) => {
		reply = answer;
		const { output, error } = await runNode({
			node,
			parameters: getMany({ date: DAY, returnAll: true }),
			credentials: fastCredentials(server),
		});

		expect(error).toBeUndefined();
		expect(output[0]).toHaveLength(count);
	});

	it('outputs a record as the service gave it, whatever its fields are named', async () => {
		const record = { id: 'x', json: { note: 'a field of the service' }, pairedItem: 3 };
		reply = { status: 200, body: JSON.stringify([record]) };
		const { output, error } = await runNode({
			node,
			parameters: getMany({ date: DAY, returnAll: true }),
			credentials: fastCredentials(server),
		});

		expect(error).toBeUndefined();
		expect(output[0]).toEqual([{ json: { ...record, listedDate: DAY }, pairedItem: { item: 0 } }]);
	});

	it('takes today in the credential’s Service Time Zone, UTC unless it says otherwise', async () => {
		reply = { status: 200, body: '' };
		const ask = async (serviceTimeZone?: string) => {
			asked = [];
			const credentials = fastCredentials(server, serviceTimeZone ? { serviceTimeZone } : {});
			const { error } = await runNode({
				node,
				parameters: getMany({ returnAll: true }),
				credentials,
			});
			expect(error).toBeUndefined();
			return asked[0];
		};
		const now = Date.now();
		const day = (timeZone: string) => listDate('', timeZone, new Date(now));

		// Both asked within a few seconds: unless that crossed a midnight, each is today in its zone.
		const [utc, kiritimati] = [await ask(), await ask('Pacific/Kiritimati')];
		expect(utc).toBe(`/api/xml/${day('UTC')}`);
		expect(kiritimati).toBe(`/api/xml/${day('Pacific/Kiritimati')}`);
	});

	it('refuses a Service Time Zone that is none before any request', async () => {
		asked = [];
		const { error } = await runNode({
			node,
			parameters: getMany({ returnAll: true }),
			credentials: fastCredentials(server, { serviceTimeZone: 'Mars/Olympus' }),
		});
		expect(error?.message).toBe(
			'The credential\'s Service Time Zone is not a time zone: "Mars/Olympus"',
		);
		expect(asked).toEqual([]);
	});

	it('fails on text that is no record', async () => {
		reply = { status: 200, body: 'maintenance' };
		const { error } = await runNode({
			node,
			parameters: getMany({ date: DAY, returnAll: true }),
			credentials: fastCredentials(server),
		});

		expect(error?.message).toBe(
			'The service answered the list of uploads with something other than records',
		);
	});
});

describe('listDate', () => {
	it('keeps a calendar date as it is', () => {
		expect(listDate('2024-05-31', 'Europe/Oslo')).toBe('2024-05-31');
		expect(listDate(' 2024-02-29 ', 'UTC')).toBe('2024-02-29');
	});

	it('takes the date of a date and time without offset as written (the picker’s form)', () => {
		expect(listDate('2024-05-31T23:30:00', 'Pacific/Auckland')).toBe('2024-05-31');
		expect(listDate('2024-05-31 00:10', 'America/New_York')).toBe('2024-05-31');
	});

	it('converts an instant to the day of the service’s time zone', () => {
		expect(listDate('2024-05-31T23:30:00Z', 'Europe/Oslo')).toBe('2024-06-01');
		expect(listDate('2024-05-31T01:00:00+02:00', 'UTC')).toBe('2024-05-30');
		expect(listDate('2024-05-31T01:00:00.123-0300', 'UTC')).toBe('2024-05-31');
		expect(listDate(new Date('2024-05-31T22:00:00Z'), 'Asia/Tokyo')).toBe('2024-06-01');
		expect(listDate(Date.parse('2024-05-31T22:00:00Z'), 'UTC')).toBe('2024-05-31');
		expect(listDate({ toISO: () => '2024-05-31T23:00:00.000-04:00' }, 'Europe/Berlin')).toBe(
			'2024-06-01',
		);
	});

	it('means today in the service’s time zone when empty', () => {
		const now = new Date('2024-05-31T23:30:00Z');
		expect(listDate('', 'Europe/Oslo', now)).toBe('2024-06-01');
		expect(listDate(undefined, 'America/New_York', now)).toBe('2024-05-31');
	});

	it('refuses what is no date', () => {
		for (const value of [
			'31.05.2024',
			'2024-13-01',
			'2024-02-30',
			'yesterday',
			'2024-05-31T25:00:00Z',
			NaN,
			new Date('x'),
			{},
		]) {
			expect(listDate(value, 'UTC')).toBeUndefined();
		}
	});
});
