import { createHash } from 'crypto';
import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { SessionOutcome, SessionOutcomeOptions, SessionStatus } from '../shared/sessions';
import { getSessionOutcome, isNotFound } from '../shared/sessions';
import type { CustomerOverride } from '../shared/transport';
import { checkBaseUrl, effectiveCustomer, getServiceCredentials, withPollDeadline } from '../shared/transport';
import { getServiceTimeZone, listUploads, serviceDay } from '../shared/uploads';
import { pollDeadlineMs, pollIntervalMs } from './pollTimes';
import { warnAboutSkippedIds } from './skippedIds';
import type { PendingSession, TriggerState, UploadRecord } from './state';
import {
	DAY_MS,
	dueSessions,
	followableRecords,
	newState,
	PENDING_MAX_AGE_MS,
	planListing,
	prune,
	readState,
	reportsErrors,
	takeListing,
	writeState,
} from './state';
import { dropStartingPoint, findStartingPoint, leaveStartingPoint } from './startingPoint';

export type StatusFilter = 'any' | 'succeeded' | 'failed';

export interface TriggerSettings {
	/** Emit an item for each upload when it first appears in a listing. */
	uploadReceived: boolean;
	/** Emit an item for each upload session when it has finished (and matches `status`). */
	uploadFinished: boolean;
	status: StatusFilter;
	includeErrorMessage: boolean;
	/** Status requests (GET .../result) one poll may send at most. */
	maxChecks: number;
	customer?: CustomerOverride;
}

/** Share of a poll's deadline after which no further status checks are started. */
const POLL_BUDGET_SHARE = 0.5;

const NOTHING_FINISHED_MESSAGE =
	'No finished upload session found today or yesterday - upload a document and try again';
const NOTHING_RECEIVED_MESSAGE =
	'No upload found today or yesterday - upload a document and try again';

// Polls of one trigger can overlap when one takes longer than the poll interval (e.g. while the
// rate limit holds its requests back); two polls working on the same state would emit twice. A poll
// ends at its deadline; one still marked running well past it (a wait that did not end with it) no
// longer holds the next polls back.
const running = new Map<string, { until: number }>();

/** How long past its deadline a poll may still hold the next ones back. */
const STUCK_POLL_MARGIN_MS = 60_000;

export async function pollUploads(
	this: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][] | null> {
	if (this.getMode() === 'manual') return await sampleEvent.call(this, settings);
	const key = `${this.getWorkflow().id ?? ''}\n${this.getNode().id || this.getNode().name}`;
	const previous = running.get(key);
	if (previous && previous.until > Date.now()) {
		this.logger.debug('Skipping a poll: the previous poll of this trigger is still running');
		return null;
	}
	if (previous) this.logger.warn('The previous poll of this trigger has not ended long after its deadline: polling goes on without it');
	const deadlineMs = pollDeadlineMs(this.getPollBudgetMs(), this.getNodeParameter('pollTimes', {}));
	const mark = { until: Date.now() + deadlineMs + STUCK_POLL_MARGIN_MS };
	running.set(key, mark);
	try {
		return await withPollDeadline(this, deadlineMs, async () => await pollOnce.call(this, settings, deadlineMs));
	} finally {
		// A later poll may have taken over from this one: its mark stays.
		if (running.get(key) === mark) running.delete(key);
	}
}

async function pollOnce(
	this: IPollFunctions,
	settings: TriggerSettings,
	/** How long the poll may run (withPollDeadline ends it then). */
	deadlineMs: number,
): Promise<INodeExecutionData[][] | null> {
	const now = Date.now();
	const staticData = this.getWorkflowStaticData('node');
	const scope = await scopeOf.call(this, settings.customer);
	const timeZone = await getServiceTimeZone.call(this);
	const previous = previousState.call(this, staticData, scope, now);
	const state: TriggerState = previous ?? newState(scope, now);
	const plan = planListing(previous?.listedAt, now, timeZone);
	if (previous && plan.skippedFrom) {
		this.logger.warn(
			`Uploads of ${plan.skippedFrom} up to the day before yesterday were not looked at: polling paused for more than a day`,
		);
	}

	const listings = new Listings(this, settings.customer);
	const items: INodeExecutionData[] = [];
	for (const day of plan.days) {
		const records = await listings.list(day);
		// On the first poll everything listed is history: remembered as known, never emitted.
		const fresh = takeListing(state, day, records, now, previous !== undefined && settings.uploadFinished);
		if (previous && settings.uploadReceived) items.push(...fresh.map(receivedItem));
	}
	state.listedAt = now;

	if (!previous) {
		writeState(staticData, state);
		leaveStartingPoint(this.getWorkflowStaticData('global'), this.getNode().id, state);
		this.logger.debug('Trigger started: uploads listed so far are taken as already known');
		return null;
	}

	for (const { id, reason } of prune(state, now, timeZone).dropped) {
		this.logger.warn(
			reason === 'age'
				? `Upload session ${id} is still unfinished after ${PENDING_MAX_AGE_MS / DAY_MS} days: no longer followed`
				: `Too many unfinished upload sessions: ${id}, the oldest, is no longer followed`,
		);
	}

	const failures = settings.uploadFinished
		? await checkPending.call(this, { state, now, settings, items, deadlineMs, listings })
		: [];
	writeState(staticData, state);
	if (failures.length > 0) {
		if (items.length === 0) throw failures[0];
		this.logger.warn(
			`${failures.length} status check(s) failed; those sessions are checked again on the next poll: ${failures[0].message}`,
		);
	}
	return items.length > 0 ? [items] : null;
}

/**
 * The state the last stored poll left, or the starting point of an activation whose own state n8n
 * did not keep (see startingPoint.ts), or undefined: this is the trigger's first poll.
 */
function previousState(
	this: IPollFunctions,
	staticData: IDataObject,
	scope: string,
	now: number,
): TriggerState | undefined {
	const workflowData = this.getWorkflowStaticData('global');
	const nodeId = this.getNode().id;
	const stored = readState(staticData, scope);
	if (stored) {
		dropStartingPoint(workflowData, nodeId);
		return stored;
	}
	const interval = pollIntervalMs(this.getNodeParameter('pollTimes', {})) ?? DAY_MS;
	const start = findStartingPoint(workflowData, nodeId, scope, now, 2 * interval);
	if (start) this.logger.debug('Continuing from the uploads listed when the trigger was activated');
	return start;
}

/**
 * The listings of one poll: each date is listed at most once, and a finished session's record is
 * read from its date's listing (the state does not keep records).
 */
class Listings {
	private readonly byDay = new Map<string, Map<string, UploadRecord>>();

	constructor(
		private readonly context: IPollFunctions,
		private readonly customer: CustomerOverride | undefined,
	) {}

	async list(day: string): Promise<UploadRecord[]> {
		const { records, skippedIds } = followableRecords(await listUploads.call(this.context, day, { customer: this.customer }));
		warnAboutSkippedIds(this.context.logger, skippedIds);
		this.byDay.set(day, new Map(records.map((record) => [record.id, record])));
		return records;
	}

	/** The session's record in this poll's listings, its date listed if it was not; a bare record if the service no longer lists it. */
	async recordOf(session: PendingSession): Promise<UploadRecord> {
		for (const records of this.byDay.values()) {
			const record = records.get(session.id);
			if (record) return record;
		}
		if (!this.byDay.has(session.day)) {
			try {
				const record = (await this.list(session.day)).find((candidate) => candidate.id === session.id);
				if (record) return record;
			} catch (error) {
				// The outcome is known: a listing that fails costs the record's details, not the event.
				this.context.logger.warn(`The uploads of ${session.day} could not be listed again: ${(error as Error).message}`);
			}
		}
		return { id: session.id, listedDate: session.day };
	}
}

interface PendingChecks {
	state: TriggerState;
	now: number;
	settings: TriggerSettings;
	items: INodeExecutionData[];
	/** How long the poll may run. */
	deadlineMs: number;
	listings: Listings;
}

/**
 * Checks due pending sessions, up to the per-poll limit, and adds an item for each finished one
 * that matches the status filter. A finished session leaves the state whether or not it matched,
 * so it is never reported twice. Returns the errors of checks that failed.
 */
async function checkPending(
	this: IPollFunctions,
	{ state, now, settings, items, deadlineMs, listings }: PendingChecks,
): Promise<Error[]> {
	const failures: Error[] = [];
	const deadline = now + deadlineMs * POLL_BUDGET_SHARE;
	let checks = 0;
	for (const session of dueSessions(state, now)) {
		const { id } = session;
		if (checks >= settings.maxChecks) break;
		if (Date.now() > deadline) {
			this.logger.debug('Leaving further status checks to the next poll: this poll took long');
			break;
		}
		checks++;
		let outcome: SessionOutcome;
		try {
			outcome = await getSessionOutcome.call(this, id, outcomeOptions(settings));
		} catch (error) {
			if (isNotFound(error)) {
				state.pending.delete(id);
				this.logger.warn(`Upload session ${id} is unknown to the service: no longer followed`);
				continue;
			}
			session.lastChecked = now;
			failures.push(error as Error);
			continue;
		}
		if (outcome.status === 'processing') {
			session.lastChecked = now;
			continue;
		}
		if (matches(settings.status, outcome.status)) {
			items.push(finishedItem(await listings.recordOf(session), outcome, settings.includeErrorMessage));
		}
		state.pending.delete(id);
	}
	return failures;
}

/**
 * "Fetch Test Event": the most recent upload that fits the settings, found without touching the
 * trigger's state. Finished sessions are looked for newest first, today then yesterday, within the
 * per-poll limit of status checks.
 */
async function sampleEvent(
	this: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][]> {
	const now = Date.now();
	const timeZone = await getServiceTimeZone.call(this);
	let checks = 0;
	for (const day of [serviceDay(now, timeZone), serviceDay(now - DAY_MS, timeZone)]) {
		if (settings.uploadFinished && checks >= settings.maxChecks) break;
		const newestFirst = (await listDay.call(this, day, settings.customer)).reverse();
		if (!settings.uploadFinished) {
			if (newestFirst.length > 0) return [[receivedItem(newestFirst[0])]];
			continue;
		}
		for (const record of sampleOrder(newestFirst, settings.status)) {
			if (checks >= settings.maxChecks) break;
			checks++;
			const outcome = await getSessionOutcome.call(this, record.id, outcomeOptions(settings));
			if (outcome.status !== 'processing' && matches(settings.status, outcome.status)) {
				return [[finishedItem(record, outcome, settings.includeErrorMessage)]];
			}
		}
	}
	if (!settings.uploadFinished) throw new NodeOperationError(this.getNode(), NOTHING_RECEIVED_MESSAGE);
	throw new NodeOperationError(this.getNode(), NOTHING_FINISHED_MESSAGE, {
		description:
			checks >= settings.maxChecks
				? `The ${checks} most recent uploads were checked (the limit of Max Status Checks per Poll)`
				: undefined,
	});
}

/** Records that report errors are failed ones: looked at first when failures are wanted, last otherwise. */
function sampleOrder(newestFirst: UploadRecord[], status: StatusFilter): UploadRecord[] {
	if (status === 'any') return newestFirst;
	const failing = newestFirst.filter(reportsErrors);
	const others = newestFirst.filter((record) => !reportsErrors(record));
	return status === 'failed' ? [...failing, ...others] : [...others, ...failing];
}

async function listDay(
	this: IPollFunctions,
	day: string,
	customer: CustomerOverride | undefined,
): Promise<UploadRecord[]> {
	return followableRecords(await listUploads.call(this, day, { customer })).records;
}

/**
 * Identifies the account and customer node the stored ids belong to: when either changes, the
 * trigger starts afresh instead of taking another node's uploads for new ones.
 */
async function scopeOf(this: IPollFunctions, customer: CustomerOverride | undefined): Promise<string> {
	const credentials = await getServiceCredentials.call(this);
	const { customerIdType, customerId } = effectiveCustomer(credentials, customer);
	const parts = [
		checkBaseUrl(credentials.baseUrl),
		String(credentials.username ?? ''),
		customerIdType,
		customerId,
	];
	return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 24);
}

/** An error message costs a request: it is fetched only where a failed session can be emitted. */
function outcomeOptions(settings: TriggerSettings): SessionOutcomeOptions {
	return {
		includeErrorMessage: settings.includeErrorMessage && settings.status !== 'succeeded',
		customer: settings.customer,
	};
}

function matches(filter: StatusFilter, status: SessionStatus): boolean {
	return filter === 'any' || filter === status;
}

function receivedItem(record: UploadRecord): INodeExecutionData {
	return { json: { ...record, event: 'uploadReceived' } };
}

function finishedItem(
	record: UploadRecord,
	outcome: SessionOutcome,
	includeErrorMessage: boolean,
): INodeExecutionData {
	const json: IDataObject = {
		...record,
		event: 'uploadFinished',
		status: outcome.status,
		errorUrl: outcome.errorUrl ?? null,
	};
	if (includeErrorMessage) {
		json.errorMessage = outcome.errorMessage ?? null;
		if (outcome.errorDocument !== undefined) json.errorDocument = outcome.errorDocument;
		if (outcome.errorText !== undefined) json.errorText = outcome.errorText;
	}
	if (outcome.warning !== undefined) json.warning = outcome.warning;
	return { json };
}
