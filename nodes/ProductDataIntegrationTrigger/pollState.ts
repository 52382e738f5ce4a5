import { createHash } from 'crypto';
import type { IDataObject, IPollFunctions } from 'n8n-workflow';

import type { Freshness } from '../shared/sharedAnswers';
import type { CustomerOverride } from '../shared/transport';
import { checkBaseUrl, effectiveCustomer, getServiceCredentials } from '../shared/transport';
import { DAY_MS } from '../shared/time';
import type { Listing } from './listings';
import { pollIntervalMs } from './pollTimes';
import type { UploadRecord } from './records';
import type { DroppedSession, PendingSession, TriggerState } from './state';
import {
	droppedSummary,
	dueSessions,
	FAILED_CHECKS_MAX,
	newState,
	planListing,
	prune,
	takeListing,
} from './state';
import { readState, writeState } from './storedState';
import { dropStartingPoint, findStartingPoint, leaveStartingPoint } from './startingPoint';

/** What a status check of a pending session found. */
export type CheckResult = 'finished' | 'processing' | 'unknown' | 'failed';

/**
 * The trigger's state as one poll works on it: loaded from static data (or the starting point of
 * the activation), changed by the poll's listings and status checks, saved at the end. A poll that
 * fails before saving leaves the stored state as it was.
 */
export interface PollState {
	readonly state: TriggerState;
	/** When the poll started (ms since epoch). */
	readonly now: number;
	/** Start of the last complete listing, undefined on the trigger's first poll. */
	readonly listedBefore: number | undefined;
	/** The trigger's poll interval. */
	readonly intervalMs: number;
	/** Sessions this poll gave up or did not follow: told in one log line when it saves. */
	readonly dropped: DroppedSession[];
	/** When the oldest listing this poll took was asked for: what the state knows is as of then. */
	listedAt: number;
}

/** The state the last stored poll left, or a new one: then this is the trigger's first poll. */
export async function loadPollState(
	context: IPollFunctions,
	customer: CustomerOverride | undefined,
	now: number,
): Promise<PollState> {
	const scope = await scopeOf(context, customer);
	const intervalMs = pollIntervalMs(context.getNodeParameter('pollTimes', {})) ?? DAY_MS;
	const previous = previousState(context, scope, now, intervalMs);
	return {
		state: previous ?? newState(scope, now),
		now,
		listedBefore: previous?.listedAt,
		intervalMs,
		dropped: [],
		listedAt: Infinity,
	};
}

/** Whether no earlier poll left a state: what this poll lists is history, remembered, never emitted. */
export function isFirstPoll(poll: PollState): boolean {
	return poll.listedBefore === undefined;
}

/**
 * Which listings of other triggers this poll may take (see ../shared/sharedAnswers.ts): only
 * those asked for after this trigger's own last listing (on its first poll, not before the poll
 * itself: its starting point is now, and an older listing would report uploads from before it),
 * and none older than its poll interval.
 */
export function listingFreshness(poll: PollState): Freshness {
	const notBefore = poll.listedBefore === undefined ? poll.now : poll.listedBefore + 1;
	return { notBefore, maxAgeMs: poll.intervalMs, poller: poll.state.poller };
}

/**
 * Which status answers about `session` of other triggers this poll may take: only those asked
 * for after this trigger's own last check of it, and none older than its poll interval.
 */
export function statusFreshness(poll: PollState, session: PendingSession): Freshness {
	return {
		notBefore: (session.lastChecked ?? -1) + 1,
		maxAgeMs: poll.intervalMs,
		poller: poll.state.poller,
	};
}

/** The dates this poll lists, oldest first. */
export function listedDays(context: IPollFunctions, poll: PollState, timeZone: string): string[] {
	const plan = planListing(poll.listedBefore, poll.now, timeZone);
	if (!isFirstPoll(poll) && plan.skippedFrom) {
		context.logger.warn(
			`Uploads of ${plan.skippedFrom} up to the day before yesterday were not looked at: polling paused for more than a day`,
		);
	}
	return plan.days;
}

/**
 * Takes one date's listing in; returns its records not seen before, oldest first. The state is
 * as of the oldest listing taken: the next poll lists again what came after it.
 */
export function takeDay(
	poll: PollState,
	day: string,
	listing: Listing,
	followFinished: boolean,
): UploadRecord[] {
	const follow = !isFirstPoll(poll) && followFinished;
	poll.listedAt = Math.min(poll.listedAt, listing.askedAt);
	const fresh = takeListing(poll.state, day, listing.records, poll.now, follow);
	if (follow) {
		for (const { id } of fresh)
			if (!poll.state.pending.has(id)) poll.dropped.push({ id, reason: 'limit' });
	}
	return fresh;
}

/** Forgets the ids later polls no longer list and gives up sessions unfinished for too long. */
export function prunePoll(poll: PollState, timeZone: string): void {
	poll.dropped.push(...prune(poll.state, asOf(poll), timeZone).dropped);
}

/** The pending sessions to check now, in the order to check them. */
export function duePending(poll: PollState): PendingSession[] {
	return dueSessions(poll.state, poll.now);
}

/**
 * Records what a status check of a pending session found (a processing session: when the answer
 * was asked for, if it was another trigger's). A session whose check failed is checked again on
 * a later poll, until its checks failed FAILED_CHECKS_MAX times in a row.
 */
export function recordCheck(
	poll: PollState,
	session: PendingSession,
	result: CheckResult,
	askedAt = poll.now,
): void {
	const failures = result === 'failed' ? (session.failedChecks ?? 0) + 1 : 0;
	if (result === 'processing' || (result === 'failed' && failures < FAILED_CHECKS_MAX)) {
		session.lastChecked = askedAt;
		if (failures > 0) session.failedChecks = failures;
		else delete session.failedChecks;
		return;
	}
	poll.state.pending.delete(session.id);
	if (result !== 'finished')
		poll.dropped.push({ id: session.id, reason: result === 'unknown' ? 'unknown' : 'failing' });
}

/** When the state is as of: its oldest listing's asking, or the poll's start when it listed nothing. */
function asOf(poll: PollState): number {
	return Number.isFinite(poll.listedAt) ? poll.listedAt : poll.now;
}

/**
 * Stores the state as of this poll's listings, and tells in one line what the poll gave up; the
 * first poll also leaves its state as the starting point.
 */
export function savePollState(context: IPollFunctions, poll: PollState): void {
	poll.state.listedAt = asOf(poll);
	writeState(context.getWorkflowStaticData('node'), poll.state);
	const summary = droppedSummary(poll.dropped);
	if (summary !== undefined) context.logger.warn(summary);
	if (!isFirstPoll(poll)) return;
	leaveStartingPoint(context.getWorkflowStaticData('global'), context.getNode().id, poll.state);
	context.logger.debug('Trigger started: uploads listed so far are taken as already known');
}

/**
 * The state the last stored poll left, or the starting point of an activation whose own state n8n
 * did not keep (see startingPoint.ts), or undefined: this is the trigger's first poll.
 */
function previousState(
	context: IPollFunctions,
	scope: string,
	now: number,
	intervalMs: number,
): TriggerState | undefined {
	const workflowData: IDataObject = context.getWorkflowStaticData('global');
	const nodeId = context.getNode().id;
	const stored = readState(context.getWorkflowStaticData('node'), scope);
	if (stored) {
		dropStartingPoint(workflowData, nodeId);
		return stored;
	}
	const start = findStartingPoint(workflowData, nodeId, scope, now, 2 * intervalMs);
	if (start)
		context.logger.debug('Continuing from the uploads listed when the trigger was activated');
	return start;
}

/**
 * Identifies the account and customer node the stored ids belong to: when either changes, the
 * trigger starts afresh instead of taking another node's uploads for new ones. Not customerScope:
 * the stored scope must stay as it is, or every active trigger would start afresh once.
 */
async function scopeOf(
	context: IPollFunctions,
	customer: CustomerOverride | undefined,
): Promise<string> {
	const credentials = await getServiceCredentials(context);
	const { customerIdType, customerId } = effectiveCustomer(credentials, customer);
	const parts = [
		checkBaseUrl(credentials.baseUrl),
		String(credentials.username ?? ''),
		customerIdType,
		customerId,
	];
	return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 24);
}
