import type { IDataObject } from 'n8n-workflow';

import { serviceDay } from '../shared/uploads';

/**
 * What the trigger remembers between polls, kept in the node's workflow static data so that it
 * survives restarts. Everything here is plain JSON: n8n stores it in its database and reads it back.
 *
 * Dates: the service lists uploads by calendar date (GET /api/xml/{yyyy-MM-dd}) and its timestamps
 * carry a UTC offset. The trigger names dates in the credential's Service Time Zone, as Get Many
 * does (serviceDay). Around midnight, and after a pause in polling
 * (restart, outage), it lists the previous date too until a listing made after that date had ended
 * (plus a grace period) has been read, so uploads of the last minutes before midnight are not missed
 * and a clock that differs a few minutes from the service's is tolerated.
 */

export const STATE_VERSION = 1;

const MINUTE_MS = 60_000;
export const DAY_MS = 24 * 60 * MINUTE_MS;

/** How long after the service's midnight the previous date is still listed. */
const MIDNIGHT_GRACE_MS = 5 * MINUTE_MS;
/** A session still unfinished this long after it was first seen is given up. */
export const PENDING_MAX_AGE_MS = 7 * DAY_MS;
/** At most this many unfinished sessions are followed; the oldest beyond are given up. */
export const PENDING_MAX_COUNT = 2000;
/** A session that keeps processing is checked less often as it ages, but at least this often. */
export const MAX_RECHECK_INTERVAL_MS = 5 * MINUTE_MS;
/** ... and at most every this fraction of its age, so long runs cost few tokens. */
const RECHECK_AGE_FRACTION = 0.25;

/** One uploaded-file record as the list-by-date operation returns it (id is the session id). */
export interface UploadRecord extends IDataObject {
	id: string;
}

export interface PendingSession {
	/** Freshest record of the session seen in a listing. */
	record: UploadRecord;
	/** The date whose listing held it. */
	day: string;
	/** When this trigger first saw it (ms since epoch, n8n's clock). */
	firstSeen: number;
	/** When its last status check answered "still processing". */
	lastChecked?: number;
}

export interface TriggerState {
	version: typeof STATE_VERSION;
	/** Which account and customer node the ids belong to (a digest, no readable account data). */
	scope: string;
	/** Start of the last poll whose listings all succeeded. */
	listedAt: number;
	/** Ids listed per date, for the dates that may still be listed (today, and yesterday just after midnight). */
	seen: Record<string, string[]>;
	/** Sessions waiting to finish, by session id. */
	pending: Record<string, PendingSession>;
}

function hasSessionId(record: IDataObject): record is UploadRecord {
	return typeof record.id === 'string' && record.id !== '';
}

/** The records of a date's listing that the trigger can follow (those with a session id), oldest first. */
export function followableRecords(listing: IDataObject[]): UploadRecord[] {
	return listing
		.filter(hasSessionId)
		.map((record, index) => ({ record, index, at: receivedAtMs(record) }))
		.sort((a, b) => (a.at ?? 0) - (b.at ?? 0) || a.index - b.index)
		.map(({ record }) => record);
}

export function receivedAtMs(record: IDataObject): number | undefined {
	const value = typeof record.receivedAt === 'string' ? Date.parse(record.receivedAt) : NaN;
	return Number.isNaN(value) ? undefined : value;
}

/** Whether the record itself already reports errors: a hint that checking it will find it finished. */
export function reportsErrors(record: IDataObject): boolean {
	return Array.isArray(record.errors) && record.errors.length > 0;
}

/**
 * The state kept in static data, as a copy the poll may change freely, or undefined when there is
 * none yet or it belongs to another account, customer node or format (the trigger then starts anew).
 */
export function readState(staticData: IDataObject, scope: string): TriggerState | undefined {
	if (staticData.version !== STATE_VERSION || staticData.scope !== scope) return undefined;
	const { listedAt, seen, pending } = staticData;
	if (typeof listedAt !== 'number' || typeof seen !== 'object' || typeof pending !== 'object') {
		return undefined;
	}
	if (seen === null || pending === null) return undefined;
	return JSON.parse(
		JSON.stringify({ version: STATE_VERSION, scope, listedAt, seen, pending }),
	) as TriggerState;
}

/**
 * Replaces the stored state. Top-level keys are assigned (not nested ones changed in place) so that
 * n8n's change tracking of static data sees the change and saves it.
 */
export function writeState(staticData: IDataObject, state: TriggerState): void {
	staticData.version = state.version;
	staticData.scope = state.scope;
	staticData.listedAt = state.listedAt;
	staticData.seen = state.seen as unknown as IDataObject;
	staticData.pending = state.pending as unknown as IDataObject;
}

export interface ListingPlan {
	/** Dates to list, oldest first; always ends with today. */
	days: string[];
	/** Set when polling paused so long that dates before yesterday were never fully listed. */
	skippedFrom?: string;
}

/**
 * The dates a poll lists: every date from the one the last complete listing fell on (moved back by
 * the grace period) up to today, but never before yesterday. `listedAt` undefined means no listing
 * yet: the dates a following poll would list, so that they can be recorded as already known.
 */
export function planListing(listedAt: number | undefined, now: number, timeZone: string): ListingPlan {
	const today = serviceDay(now, timeZone);
	const yesterday = serviceDay(now - DAY_MS, timeZone);
	const from = serviceDay(Math.min(listedAt ?? now, now) - MIDNIGHT_GRACE_MS, timeZone);
	const days = from < today ? [yesterday, today] : [today];
	return from < yesterday ? { days, skippedFrom: from } : { days };
}

export function newState(scope: string, now: number): TriggerState {
	return { version: STATE_VERSION, scope, listedAt: now, seen: {}, pending: {} };
}

/**
 * Takes one date's listing into the state. Returns the records not seen before (oldest first);
 * with `follow`, they become pending sessions. Pending sessions get their freshest record.
 */
export function takeListing(
	state: TriggerState,
	day: string,
	records: UploadRecord[],
	now: number,
	follow: boolean,
): UploadRecord[] {
	const known = new Set<string>();
	for (const ids of Object.values(state.seen)) for (const id of ids) known.add(id);
	const seenToday = (state.seen[day] ??= []);
	const fresh: UploadRecord[] = [];
	for (const record of records) {
		const pending = state.pending[record.id];
		if (pending) pending.record = record;
		if (known.has(record.id)) continue;
		known.add(record.id);
		seenToday.push(record.id);
		fresh.push(record);
		if (follow) state.pending[record.id] = { record, day, firstSeen: now };
	}
	return fresh;
}

export interface PruneResult {
	/** Pending sessions given up, with why. */
	dropped: Array<{ id: string; reason: 'age' | 'count' }>;
}

/**
 * Keeps the state bounded: ids of dates that will not be listed again are forgotten, and sessions
 * that have been processing for too long (or too many of them) are given up. Call it after the
 * listings of a poll, with `now` the poll's time (then also its `listedAt`).
 */
export function prune(state: TriggerState, now: number, timeZone: string): PruneResult {
	// The next poll lists from this date on (see planListing, with listedAt = now).
	const oldestListed = serviceDay(now - MIDNIGHT_GRACE_MS, timeZone);
	for (const day of Object.keys(state.seen)) {
		if (day < oldestListed) delete state.seen[day];
	}
	const dropped: PruneResult['dropped'] = [];
	for (const [id, session] of Object.entries(state.pending)) {
		if (now - session.firstSeen > PENDING_MAX_AGE_MS) {
			delete state.pending[id];
			dropped.push({ id, reason: 'age' });
		}
	}
	const remaining = Object.entries(state.pending);
	if (remaining.length > PENDING_MAX_COUNT) {
		remaining
			.sort(([, a], [, b]) => a.firstSeen - b.firstSeen)
			.slice(0, remaining.length - PENDING_MAX_COUNT)
			.forEach(([id]) => {
				delete state.pending[id];
				dropped.push({ id, reason: 'count' });
			});
	}
	return { dropped };
}

function isDue(session: PendingSession, now: number): boolean {
	if (session.lastChecked === undefined) return true;
	const age = session.lastChecked - session.firstSeen;
	const wait = Math.min(MAX_RECHECK_INTERVAL_MS, Math.max(0, age) * RECHECK_AGE_FRACTION);
	return now - session.lastChecked >= wait;
}

/**
 * Pending sessions to check now, in order: those whose record already reports errors (a check will
 * find them finished), then the one waiting longest - never checked sessions by when they were first
 * seen, the others by their last check - so that a few long-running sessions cannot starve the rest.
 */
export function dueSessions(state: TriggerState, now: number): Array<[string, PendingSession]> {
	const waitingSince = (session: PendingSession) => session.lastChecked ?? session.firstSeen;
	return Object.entries(state.pending)
		.filter(([, session]) => isDue(session, now))
		.sort(
			([idA, a], [idB, b]) =>
				Number(reportsErrors(b.record)) - Number(reportsErrors(a.record)) ||
				waitingSince(a) - waitingSince(b) ||
				(receivedAtMs(a.record) ?? 0) - (receivedAtMs(b.record) ?? 0) ||
				(idA < idB ? -1 : idA > idB ? 1 : 0),
		);
}

