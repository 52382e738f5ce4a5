/**
 * Polls of one trigger never overlap, but a poll that does not end (a wait that ignored its
 * deadline) holds the next ones back only until a while past its deadline.
 */
import type { IPollFunctions } from 'n8n-workflow';

import type { TriggerSettings } from '../../nodes/ProductDataIntegrationTrigger/events';
import { pollUploads } from '../../nodes/ProductDataIntegrationTrigger/poll';
import { createPollContext } from '../../scripts/n8n/in-process';

const SETTINGS: TriggerSettings = {
	uploadReceived: false,
	uploadFinished: true,
	status: 'any',
	includeErrorMessage: false,
	maxChecks: 8,
};

/** Ends the polls left hanging, so their deadline timers do not outlive the test. */
const hanging: Array<() => void> = [];
afterAll(() => hanging.forEach((end) => end()));

/** A poll context of one trigger whose credential does not come until the test is over: its polls do not end. */
function hangingPoll() {
	const context = createPollContext({
		credentials: {},
		nodeParameters: { pollTimes: { item: [{ mode: 'everyMinute' }] } },
	}) as ReturnType<typeof createPollContext> & Record<string, unknown>;
	context.getCredentials = async () =>
		await new Promise((_resolve, reject) =>
			hanging.push(() => reject(new Error('The test is over'))),
		);
	context.getPollBudgetMs = () => 60_000;
	context.getWorkflow = () => ({ id: 'overlap-workflow', active: true });
	context.getWorkflowStaticData = () => ({});
	return context as unknown as IPollFunctions & { logged: string[] };
}

afterEach(() => jest.restoreAllMocks());

it('skips a poll while the previous one runs, and goes on without it once it is long past its deadline', async () => {
	const start = Date.now();
	const first = hangingPoll();
	const firstPoll = pollUploads(first, SETTINGS).catch(() => null);

	const second = hangingPoll();
	expect(await pollUploads(second, SETTINGS)).toBeNull();
	expect(second.logged).toContain(
		'debug Skipping a poll: the previous poll of this trigger is still running',
	);

	// 55 s: the poll's deadline for a budget of a minute; a minute more and it no longer counts.
	jest.spyOn(Date, 'now').mockReturnValue(start + 55_000 + 60_000 + 1_000);
	const third = hangingPoll();
	const thirdPoll = pollUploads(third, SETTINGS).catch(() => null);
	expect(third.logged).toContain(
		'warn The previous poll of this trigger has not ended long after its deadline: polling goes on without it',
	);
	jest.restoreAllMocks();
	hanging.forEach((end) => end());
	expect(await Promise.all([firstPoll, thirdPoll])).toEqual([null, null]);
});
