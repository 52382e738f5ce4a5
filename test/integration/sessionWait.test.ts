/**
 * The wait for sessions against the emulator, counting what reaches the service: retries have one
 * owner, the transport, so a session whose status keeps failing costs its tries, never more.
 */
import { waitForSessions, type SessionToAwait, type WaitResult } from '../../nodes/shared/sessions';
import { startEmulator, type Emulator } from '../../scripts/emulator';
import { createContext, type TestContext } from '../../scripts/n8n/context';
import { emulatorCredentials } from '../../scripts/n8n/in-process';
import { callService, failure, postControl } from '../helpers/service';

const XML = '<?xml version="1.0" encoding="UTF-8"?><products><product><sku>A-1</sku></product></products>';
const RESULT = 'GET /api/status/{id}/result';

jest.setTimeout(30_000);

let service: Emulator;

beforeAll(async () => {
	service = await startEmulator({ leakIntervalMs: 50, processingMs: 60_000 });
});

afterAll(async () => {
	await service.close();
});

beforeEach(() => service.reset());

function context(): TestContext {
	return createContext({
		credentials: emulatorCredentials(service, { customRateLimit: true, bucketCapacity: 50, leakIntervalSeconds: 0.05 }),
	});
}

/** A document the emulator is still processing: its session ID. */
async function uploaded(on: TestContext): Promise<string> {
	const response = await callService<string>(on, {
		method: 'PUT',
		path: '/api/xml',
		body: XML,
		headers: { 'Content-Type': 'application/xml' },
		responseType: 'text',
	});
	return response.body.trim();
}

async function wait(on: TestContext, sessionId: string): Promise<WaitResult[]> {
	const session: SessionToAwait = { sessionId, itemIndex: 0, includeErrorMessage: false, timeoutMs: 20_000 };
	// Rounds 10 ms apart: a wait that asked again after a failure would do so at once.
	return await waitForSessions.call(on, [session], { initialDelayMs: 10, maxDelayMs: 10 });
}

describe('a session whose status keeps failing', () => {
	it.each([
		['500', '500', 'An error has occurred.'],
		['a reset connection', 'reset', expect.stringMatching(/^GET \/api\/status\/[0-9a-f-]+\/result failed: /)],
	])('%s: the wait costs the transport\'s 3 tries, and ends with its error', async (_name, kind, message) => {
		const on = context();
		const sessionId = await uploaded(on);
		await postControl(service.url, 'faults', { count: 100, kind, path: '/api/status/' });
		const error = await failure(wait(on, sessionId));
		expect(error.message).toEqual(message);
		expect(service.stats().requests[RESULT]).toBe(3);
	});

	it('a status that fails twice and then answers is followed to the end', async () => {
		const on = context();
		const sessionId = await uploaded(on);
		await postControl(service.url, 'faults', { count: 2, kind: '500', path: '/api/status/' });
		const [outcome] = await wait(on, sessionId);
		expect(outcome).toMatchObject({ sessionId, status: 'processing' });
	});
});
