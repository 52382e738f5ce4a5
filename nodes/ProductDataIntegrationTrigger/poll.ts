import type { INodeExecutionData, IPollFunctions } from 'n8n-workflow';

import { runAlone } from '../shared/runAlone';
import type { Freshness, SharedAnswer } from '../shared/sharedAnswers';
import { sharedAnswer } from '../shared/sharedAnswers';
import type { SessionOutcome } from '../shared/sessions';
import { getSessionOutcome, isNotFound } from '../shared/sessions';
import { ALLOWED_INTERNAL_HOSTS, cancelSignal, withPollDeadline } from '../shared/transport';
import { getServiceTimeZone } from '../shared/uploads';
import type { TriggerSettings } from './events';
import { finishedItem, matches, outcomeOptions, receivedItem } from './events';
import { Listings } from './listings';
import {
	duePending,
	isFirstPoll,
	listedDays,
	listingFreshness,
	loadPollState,
	prunePoll,
	recordCheck,
	savePollState,
	statusFreshness,
	takeDay,
} from './pollState';
import { pollDeadlineMs } from './pollTimes';
import { sampleEvent } from './sampleEvent';

/** Share of a poll's deadline after which no further status checks are started. */
const POLL_BUDGET_SHARE = 0.5;
/**
 * How long another trigger may take a "still processing" answer: a session finishes at any moment,
 * and an older answer would hold its event back by up to a poll interval. Sharing may cost seconds.
 */
const PROCESSING_SHARED_MS = 5_000;

export async function pollUploads(
	context: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][] | null> {
	if (context.getMode() === 'manual') return await sampleEvent(context, settings);
	const deadlineMs = pollDeadlineMs(
		context.getPollBudgetMs(),
		context.getNodeParameter('pollTimes', {}),
	);
	// The deadline holds the wait for the node across processes too, not only the poll itself.
	return await withPollDeadline(
		context,
		deadlineMs,
		async () =>
			await runAlone(
				context,
				{
					skipped: 'Skipping a poll: the previous poll of this trigger is still running',
					deadline: {
						ms: deadlineMs,
						stuck:
							'The previous poll of this trigger has not ended long after its deadline: polling goes on without it',
					},
				},
				async () => await poll(context, settings, deadlineMs),
			),
	);
}

/**
 * One poll: lists the dates due, emits what is new, checks the unfinished sessions due (within the
 * per-poll limit and half the deadline) and emits those that finished, then saves the state. A
 * finished session leaves the state whether or not it matched the filter, so it is never reported
 * twice.
 */
async function poll(
	context: IPollFunctions,
	settings: TriggerSettings,
	/** How long the poll may run (withPollDeadline ends it then). */
	deadlineMs: number,
): Promise<INodeExecutionData[][] | null> {
	const now = Date.now();
	const timeZone = await getServiceTimeZone(context);
	const state = await loadPollState(context, settings.customer, now);
	const listings = new Listings(context, settings.customer, listingFreshness(state));
	const items: INodeExecutionData[] = [];
	for (const day of listedDays(context, state, timeZone)) {
		const fresh = takeDay(state, day, await listings.list(day), settings.uploadFinished);
		if (!isFirstPoll(state) && settings.uploadReceived) items.push(...fresh.map(receivedItem));
	}
	if (isFirstPoll(state)) {
		savePollState(context, state);
		return null;
	}
	prunePoll(state, timeZone);

	const failures: Error[] = [];
	let stopped: Error | undefined;
	const checksEndAt = now + deadlineMs * POLL_BUDGET_SHARE;
	const answerKind = statusAnswerKind(context, settings);
	for (const session of settings.uploadFinished
		? duePending(state).slice(0, settings.maxChecks)
		: []) {
		if (Date.now() > checksEndAt) {
			context.logger.debug('Leaving further status checks to the next poll: this poll took long');
			break;
		}
		let outcome: SessionOutcome;
		let askedAt: number;
		try {
			({ value: outcome, askedAt } = await sessionOutcome(
				context,
				session.id,
				settings,
				answerKind,
				statusFreshness(state, session),
			));
		} catch (error) {
			// Stopped at the poll's deadline: not the session's failure; the poll ends as stopped.
			if (cancelSignal(context)?.aborted) {
				stopped = error as Error;
				break;
			}
			if (!isNotFound(error)) failures.push(error as Error);
			recordCheck(state, session, isNotFound(error) ? 'unknown' : 'failed');
			continue;
		}
		if (outcome.status !== 'processing' && matches(settings.status, outcome.status)) {
			items.push(
				finishedItem(await listings.recordOf(session), outcome, settings.includeErrorMessage),
			);
		}
		recordCheck(
			state,
			session,
			outcome.status === 'processing' ? 'processing' : 'finished',
			askedAt,
		);
	}
	savePollState(context, state);

	if (failures.length > 0) {
		context.logger.warn(
			`${failures.length} status check(s) failed; those sessions are checked again on a later poll: ${failures[0].message}`,
		);
	}
	if (stopped && items.length === 0) throw stopped;
	return items.length > 0 ? [items] : null;
}

/**
 * The session's status as the service answered it to this trigger or, within `freshness`, to
 * another trigger of the account and customer node asking the same (with or without the error
 * message, fetched under the same Allowed Internal Hosts). Only answers are shared: a failed check
 * is this trigger's own.
 */
async function sessionOutcome(
	context: IPollFunctions,
	sessionId: string,
	settings: TriggerSettings,
	answerKind: string,
	freshness: Freshness,
): Promise<SharedAnswer<SessionOutcome>> {
	return await sharedAnswer(
		context,
		settings.customer,
		['status', sessionId, answerKind],
		freshness,
		async () => await getSessionOutcome(context, sessionId, outcomeOptions(settings)),
		(outcome) => (outcome.status === 'processing' ? PROCESSING_SHARED_MS : Infinity),
	);
}

/**
 * Which status answers this poll shares (read once per poll): without the error message, or with it
 * as fetched under the trigger's Allowed Internal Hosts, spelled alike for triggers that allow
 * alike. An error message fetched under one trigger's allowance is never another's, whose allowance
 * may refuse its host, or allow a host the first was refused.
 */
function statusAnswerKind(context: IPollFunctions, settings: TriggerSettings): string {
	if (!outcomeOptions(settings).includeErrorMessage) return '';
	const value = context.getNodeParameter(`options.${ALLOWED_INTERNAL_HOSTS}`, '');
	const allowed = String(typeof value === 'string' ? value : '')
		.split(',')
		.map((entry) => entry.trim().toLowerCase())
		.filter((entry) => entry !== '')
		.sort()
		.join(',');
	return `with error message from ${allowed}`;
}
