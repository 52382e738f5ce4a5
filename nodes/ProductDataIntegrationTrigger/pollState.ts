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
export class PollState {
	/** Sessions this poll gave up or did not follow: told in one log line when it saves. */
	private readonly dropped: DroppedSession[] = [];

	/** When the oldest listing this poll took was asked for: what the state knows is as of then. */
	private listedAt = Infinity;

	private constructor(
		private readonly context: IPollFunctions,
		private readonly state: TriggerState,
		/** When the poll started (ms since epoch). */
		private readonly now: number,
		/** Start of the last complete listing, undefined on the trigger's first poll. */
		private readonly listedBefore: number | undefined,
	) {}

	/** The state the last stored poll left, or a new one: then this is the trigger's first poll. */
	static async load(
		context: IPollFunctions,
		customer: CustomerOverride | undefined,
		now: number,
	): Promise<PollState> {
		const scope = await scopeOf(context, customer);
		const previous = previousState(context, scope, now);
		return new PollState(context, previous ?? newState(scope, now), now, previous?.listedAt);
	}

	/** Whether no earlier poll left a state: what this poll lists is history, remembered, never emitted. */
	get isFirst(): boolean {
		return this.listedBefore === undefined;
	}

	/**
	 * Which listings of other triggers this poll may take (see ../shared/sharedAnswers.ts): only
	 * those asked for after this trigger's own last listing (on its first poll, not before the poll
	 * itself: its starting point is now, and an older listing would report uploads from before it),
	 * and none older than its poll interval.
	 */
	listingFreshness(): Freshness {
		const notBefore = this.listedBefore === undefined ? this.now : this.listedBefore + 1;
		return { notBefore, maxAgeMs: this.intervalMs(), poller: this.state.poller };
	}

	/**
	 * Which status answers about `session` of other triggers this poll may take: only those asked
	 * for after this trigger's own last check of it, and none older than its poll interval.
	 */
	statusFreshness(session: PendingSession): Freshness {
		return {
			notBefore: (session.lastChecked ?? -1) + 1,
			maxAgeMs: this.intervalMs(),
			poller: this.state.poller,
		};
	}

	private intervalMs(): number {
		return pollIntervalMs(this.context.getNodeParameter('pollTimes', {})) ?? DAY_MS;
	}

	/** The dates this poll lists, oldest first. */
	plan(timeZone: string): string[] {
		const plan = planListing(this.listedBefore, this.now, timeZone);
		if (!this.isFirst && plan.skippedFrom) {
			this.context.logger.warn(
				`Uploads of ${plan.skippedFrom} up to the day before yesterday were not looked at: polling paused for more than a day`,
			);
		}
		return plan.days;
	}

	/**
	 * Takes one date's listing in; returns its records not seen before, oldest first. The state is
	 * as of the oldest listing taken: the next poll lists again what came after it.
	 */
	take(day: string, listing: Listing, followFinished: boolean): UploadRecord[] {
		const follow = !this.isFirst && followFinished;
		this.listedAt = Math.min(this.listedAt, listing.askedAt);
		const fresh = takeListing(this.state, day, listing.records, this.now, follow);
		if (follow) {
			for (const { id } of fresh)
				if (!this.state.pending.has(id)) this.dropped.push({ id, reason: 'limit' });
		}
		return fresh;
	}

	/** Forgets the ids later polls no longer list and gives up sessions unfinished for too long. */
	prune(timeZone: string): void {
		this.dropped.push(...prune(this.state, this.asOf(), timeZone).dropped);
	}

	/** The pending sessions to check now, in the order to check them. */
	due(): PendingSession[] {
		return dueSessions(this.state, this.now);
	}

	/**
	 * Records what a status check of a pending session found (a processing session: when the answer
	 * was asked for, if it was another trigger's). A session whose check failed is checked again on
	 * a later poll, until its checks failed FAILED_CHECKS_MAX times in a row.
	 */
	checked(session: PendingSession, result: CheckResult, askedAt = this.now): void {
		const failures = result === 'failed' ? (session.failedChecks ?? 0) + 1 : 0;
		if (result === 'processing' || (result === 'failed' && failures < FAILED_CHECKS_MAX)) {
			session.lastChecked = askedAt;
			if (failures > 0) session.failedChecks = failures;
			else delete session.failedChecks;
			return;
		}
		this.state.pending.delete(session.id);
		if (result !== 'finished')
			this.dropped.push({ id: session.id, reason: result === 'unknown' ? 'unknown' : 'failing' });
	}

	/** When the state is as of: its oldest listing's asking, or the poll's start when it listed nothing. */
	private asOf(): number {
		return Number.isFinite(this.listedAt) ? this.listedAt : this.now;
	}

	/**
	 * Stores the state as of this poll's listings, and tells in one line what the poll gave up; the
	 * first poll also leaves its state as the starting point.
	 */
	save(): void {
		this.state.listedAt = this.asOf();
		writeState(this.context.getWorkflowStaticData('node'), this.state);
		const summary = droppedSummary(this.dropped);
		if (summary !== undefined) this.context.logger.warn(summary);
		if (!this.isFirst) return;
		leaveStartingPoint(
			this.context.getWorkflowStaticData('global'),
			this.context.getNode().id,
			this.state,
		);
		this.context.logger.debug('Trigger started: uploads listed so far are taken as already known');
	}
}

/**
 * The state the last stored poll left, or the starting point of an activation whose own state n8n
 * did not keep (see startingPoint.ts), or undefined: this is the trigger's first poll.
 */
function previousState(
	context: IPollFunctions,
	scope: string,
	now: number,
): TriggerState | undefined {
	const workflowData: IDataObject = context.getWorkflowStaticData('global');
	const nodeId = context.getNode().id;
	const stored = readState(context.getWorkflowStaticData('node'), scope);
	if (stored) {
		dropStartingPoint(workflowData, nodeId);
		return stored;
	}
	const interval = pollIntervalMs(context.getNodeParameter('pollTimes', {})) ?? DAY_MS;
	const start = findStartingPoint(workflowData, nodeId, scope, now, 2 * interval);
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
