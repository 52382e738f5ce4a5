/**
 * The wait for sessions against the emulator, counting what reaches the service: retries have one
 * owner, the transport, so a session whose status keeps failing costs its tries, never more.
 */
import { waitForSessions, type SessionToAwait, type WaitResult } from '../../nodes/shared/sessions';
import { createContext, type TestContext } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { callService, postControl } from '../helpers/service';

const XML =
	'<?xml version="1.0" encoding="UTF-8"?><products><product><sku>A-1</sku></product></products>';
const RESULT = 'GET /api/status/{id}/result';

jest.setTimeout(30_000);

const { emulator: service, credentials } = useEmulator({ ...FAST_BUCKET, processingMs: 60_000 });

function context(): TestContext {
	return createContext({ credentials: credentials() });
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

async function wait(
	on: TestContext,
	sessionIds: string[],
	timeoutMs = 20_000,
): Promise<WaitResult[]> {
	const sessions = sessionIds.map(
		(sessionId, itemIndex): SessionToAwait => ({
			sessionId,
			itemIndex,
			includeErrorMessage: false,
			timeoutMs,
		}),
	);
	// Rounds 10 ms apart: a wait that asked again after a failure would do so at once.
	return await waitForSessions(on, sessions, { initialDelayMs: 10, maxDelayMs: 10 });
}

describe('a session whose status keeps failing', () => {
	it.each([
		['500', '500', 'An error has occurred.'],
		[
			'a reset connection',
			'reset',
			expect.stringMatching(/^GET \/api\/status\/[0-9a-f-]+\/result failed: /),
		],
	])(
		"%s: the session costs the transport's 3 tries and comes back with its error; the others are still awaited",
		async (_name, kind, message) => {
			const on = context();
			const failing = await uploaded(on);
			const other = await uploaded(on);
			await postControl(service.url, 'faults', {
				count: 100,
				kind,
				path: `/api/status/${failing}`,
			});
			// No time to wait: one round, where every session is asked.
			const [failed, asked] = await wait(on, [failing, other], 0);
			expect(failed).toMatchObject({
				sessionId: failing,
				error: expect.objectContaining({ message }),
			});
			expect(asked).toMatchObject({ sessionId: other, status: 'processing' });
			// 3 for the failing session, 1 for the other.
			expect(service.stats().requests[RESULT]).toBe(4);
		},
	);

	it('a status that fails twice and then answers is followed to the end', async () => {
		const on = context();
		const sessionId = await uploaded(on);
		await postControl(service.url, 'faults', { count: 2, kind: '500', path: '/api/status/' });
		const [outcome] = await wait(on, [sessionId]);
		expect(outcome).toMatchObject({ sessionId, status: 'processing' });
	});
});
