import { randomUUID } from 'crypto';

import { DAY_MS, MINUTE_MS } from '../shared/time';
import { receivedAtMs, serviceDay } from '../shared/uploads';
import type { UploadRecord } from './records';
import { reportsErrors } from './records';

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

export const STATE_VERSION = 2;

/** How long after the service's midnight the previous date is still listed. */
const MIDNIGHT_GRACE_MS = 5 * MINUTE_MS;
/** A session still unfinished this long after it was first seen is given up. */
const PENDING_MAX_AGE_MS = 7 * DAY_MS;
/**
 * At most this many unfinished sessions are followed: new sessions beyond are not followed, so a
 * large listing never pushes out the sessions followed already. A followed session costs at most
 * 150 bytes of static data (its id, date, times, error hint and failure count, not its record), so
 * the pending sessions stay under 300 KB.
 */
const PENDING_MAX_COUNT = 2000;
/**
 * At most this many ids of one date are kept (the oldest dropped first): 5,000 ids cost about
 * 195 KB of static data. The date's records received up to the newest dropped one are known
 * without their ids.
 */
const SEEN_MAX_PER_DAY = 5000;
/** A session whose status check failed this many times in a row is given up. */
export const FAILED_CHECKS_MAX = 20;
/** A session that keeps processing is checked less often as it ages, but at least this often. */
const MAX_RECHECK_INTERVAL_MS = 5 * MINUTE_MS;
/** ... and at most every this fraction of its age, so long runs cost few tokens. */
const RECHECK_AGE_FRACTION = 0.25;

/**
 * A session waiting to finish. Its record is not kept: the poll that sees it finish reads it from
 * that poll's listing of its date.
 */
export interface PendingSession {
	id: string;
	/** The date whose listing held it. */
	day: string;
	/** When this trigger first saw it (ms since epoch, n8n's clock). */
	firstSeen: number;
	/** When its last status check answered "still processing". */
	lastChecked?: number;
	/** Its latest record already reported errors: a check will likely find it finished. */
	reportsErrors?: boolean;
	/** How many of its status checks in a row failed (the service's error, not an answer). */
	failedChecks?: number;
}

/**
 * The state while a poll works on it. Maps, keyed by session ids and dates, so that no value from
 * the service ever names a property of an object.
 */
export interface TriggerState {
	version: typeof STATE_VERSION;
	/** Which account and customer node the ids belong to (a digest, no readable account data). */
	scope: string;
	/**
	 * Names this trigger among those sharing answers of the service (a random id, kept across
	 * restarts): a trigger never takes back an answer it asked for itself.
	 */
	poller: string;
	/** When the last poll whose listings all succeeded had its oldest listing asked for. */
	listedAt: number;
	/** Session ids listed per date, for the dates that may still be listed (today, and yesterday just after midnight). */
	seen: Map<string, string[]>;
	/** Per date whose ids reached the bound: records received up to this time (ms) are known without their ids. */
	seenUntil: Map<string, number>;
	/** Sessions waiting to finish, by session id. */
	pending: Map<string, PendingSession>;
}

interface ListingPlan {
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
export function planListing(
	listedAt: number | undefined,
	now: number,
	timeZone: string,
): ListingPlan {
	const today = serviceDay(now, timeZone);
	const yesterday = serviceDay(now - DAY_MS, timeZone);
	const from = serviceDay(Math.min(listedAt ?? now, now) - MIDNIGHT_GRACE_MS, timeZone);
	const days = from < today ? [yesterday, today] : [today];
	return from < yesterday ? { days, skippedFrom: from } : { days };
}

export function newState(scope: string, now: number): TriggerState {
	return {
		version: STATE_VERSION,
		scope,
		poller: randomUUID(),
		listedAt: now,
		seen: new Map(),
		seenUntil: new Map(),
		pending: new Map(),
	};
}

/**
 * Takes one date's listing into the state. Returns the records not seen before (oldest first);
 * with `follow`, they become pending sessions while fewer than PENDING_MAX_COUNT are. Pending
 * sessions take the error hint of their freshest record.
 */
export function takeListing(
	state: TriggerState,
	day: string,
	records: UploadRecord[],
	now: number,
	follow: boolean,
): UploadRecord[] {
	const known = new Set<string>();
	for (const ids of state.seen.values()) for (const id of ids) known.add(id);
	const until = state.seenUntil.get(day);
	const seenThatDay = state.seen.get(day) ?? [];
	state.seen.set(day, seenThatDay);
	const fresh: UploadRecord[] = [];
	for (const record of records) {
		const pending = state.pending.get(record.id);
		if (pending) setErrorHint(pending, record);
		// A session still followed is known, even when its day's ids have been pruned meanwhile.
		// A record without a readable time cannot be placed before the dropped ones: it is new.
		const at = receivedAtMs(record);
		if (known.has(record.id) || pending || (until !== undefined && at !== undefined && at <= until))
			continue;
		known.add(record.id);
		seenThatDay.push(record.id);
		fresh.push(record);
		if (follow && state.pending.size < PENDING_MAX_COUNT) {
			state.pending.set(record.id, setErrorHint({ id: record.id, day, firstSeen: now }, record));
		}
	}
	if (seenThatDay.length > SEEN_MAX_PER_DAY) dropOldestSeen(state, day, records);
	return fresh;
}

/** A record's place in time as the listing orders it (see followableRecords): no time is the oldest. */
function receivedAt(record: UploadRecord): number {
	return receivedAtMs(record) ?? 0;
}

/**
 * Keeps the SEEN_MAX_PER_DAY newest ids of the date and remembers up to when the dropped ones were
 * received, so they stay known. Ids the listing no longer holds go first: their time is unknown.
 */
function dropOldestSeen(state: TriggerState, day: string, records: UploadRecord[]): void {
	const times = new Map(records.map((record) => [record.id, receivedAt(record)]));
	const oldestFirst = [...(state.seen.get(day) ?? [])]
		.map((id, index) => ({ id, index, at: times.get(id) }))
		.sort((a, b) => (a.at ?? -Infinity) - (b.at ?? -Infinity) || a.index - b.index);
	const dropped = oldestFirst.slice(0, oldestFirst.length - SEEN_MAX_PER_DAY);
	const droppedUntil = dropped.reduce(
		(latest, { at }) => Math.max(latest, at ?? -Infinity),
		state.seenUntil.get(day) ?? -Infinity,
	);
	if (droppedUntil > -Infinity) state.seenUntil.set(day, droppedUntil);
	state.seen.set(
		day,
		oldestFirst
			.slice(dropped.length)
			.sort((a, b) => a.index - b.index)
			.map(({ id }) => id),
	);
}

function setErrorHint(session: PendingSession, record: UploadRecord): PendingSession {
	if (reportsErrors(record)) session.reportsErrors = true;
	else delete session.reportsErrors;
	return session;
}

/** Why a session is no longer followed, or was never followed. */
type DropReason = 'age' | 'limit' | 'unknown' | 'failing';

export interface DroppedSession {
	id: string;
	reason: DropReason;
}

interface PruneResult {
	/** Pending sessions given up, with why. */
	dropped: DroppedSession[];
}

/**
 * Keeps the state bounded: ids of dates that will not be listed again are forgotten, and sessions
 * that have been processing for too long are given up. Call it after the listings of a poll, with
 * `now` the time the state is as of (its `listedAt`: when the poll's oldest listing was asked for).
 */
export function prune(state: TriggerState, now: number, timeZone: string): PruneResult {
	// The next poll lists from this date on (see planListing, with listedAt = now).
	const oldestListed = serviceDay(now - MIDNIGHT_GRACE_MS, timeZone);
	for (const day of [...state.seen.keys()]) {
		if (day >= oldestListed) continue;
		state.seen.delete(day);
		state.seenUntil.delete(day);
	}
	const dropped: DroppedSession[] = [];
	for (const [id, session] of [...state.pending]) {
		if (now - session.firstSeen > PENDING_MAX_AGE_MS) {
			state.pending.delete(id);
			dropped.push({ id, reason: 'age' });
		}
	}
	return { dropped };
}

/** Ids named in a summary line per reason; the rest are counted. */
const NAMED_DROPPED = 3;

/**
 * One log line for all the sessions a poll gave up or did not follow, naming a few of each reason,
 * or undefined when there are none.
 */
export function droppedSummary(dropped: DroppedSession[]): string | undefined {
	const why: Record<DropReason, string> = {
		age: `still unfinished after ${PENDING_MAX_AGE_MS / DAY_MS} days: no longer followed`,
		limit: `not followed: ${PENDING_MAX_COUNT} unfinished sessions are followed at most`,
		unknown: 'unknown to the service: no longer followed',
		failing: `no longer followed after ${FAILED_CHECKS_MAX} failed status checks in a row`,
	};
	const parts = (Object.keys(why) as DropReason[]).flatMap((reason) => {
		const ids = dropped.filter((entry) => entry.reason === reason).map(({ id }) => id);
		if (ids.length === 0) return [];
		if (ids.length === 1) return [`Upload session ${ids[0]} is ${why[reason]}`];
		const sessions = reason === 'limit' ? 'new upload sessions' : 'upload sessions';
		const more = ids.length > NAMED_DROPPED ? ` and ${ids.length - NAMED_DROPPED} more` : '';
		return [
			`${ids.length} ${sessions} are ${why[reason]} (${ids.slice(0, NAMED_DROPPED).join(', ')}${more})`,
		];
	});
	return parts.length > 0 ? parts.join('; ') : undefined;
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
export function dueSessions(state: TriggerState, now: number): PendingSession[] {
	const waitingSince = (session: PendingSession) => session.lastChecked ?? session.firstSeen;
	return [...state.pending.values()]
		.filter((session) => isDue(session, now))
		.sort(
			(a, b) =>
				Number(b.reportsErrors === true) - Number(a.reportsErrors === true) ||
				waitingSince(a) - waitingSince(b) ||
				(a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
		);
}
