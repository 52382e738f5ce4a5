import type { IDataObject } from 'n8n-workflow';

import { normalizeSessionId } from '../shared/sessions';
import { reportsErrors } from './records';
import { newState, STATE_VERSION, type PendingSession, type TriggerState } from './state';

/*
 * The trigger's state as n8n keeps it in the node's workflow static data (see ./state.ts), read
 * back with every entry checked, and older formats read as the current one.
 */

const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
const POLLER_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The state as n8n keeps it in static data: arrays only, so that it is plain JSON, survives n8n's
 * save and load, and has no keys taken from the service.
 */
interface StoredState extends IDataObject {
	version: typeof STATE_VERSION;
	scope: string;
	poller: string;
	listedAt: number;
	seen: Array<{ day: string; ids: string[]; until?: number }>;
	pending: PendingSession[];
}

const isTime = (value: unknown): value is number =>
	typeof value === 'number' && Number.isFinite(value);
const isDay = (value: unknown): value is string =>
	typeof value === 'string' && DAY_PATTERN.test(value);
const isSessionId = (value: unknown): value is string =>
	typeof value === 'string' && normalizeSessionId(value) === value;

function readPending(entry: unknown): PendingSession | undefined {
	if (typeof entry !== 'object' || entry === null) return undefined;
	const {
		id,
		day,
		firstSeen,
		lastChecked,
		reportsErrors: errors,
		failedChecks,
	} = entry as IDataObject;
	if (!isSessionId(id) || !isDay(day) || !isTime(firstSeen)) return undefined;
	const session: PendingSession = { id, day, firstSeen };
	if (isTime(lastChecked)) session.lastChecked = lastChecked;
	if (errors === true) session.reportsErrors = true;
	if (Number.isInteger(failedChecks) && (failedChecks as number) > 0)
		session.failedChecks = failedChecks as number;
	return session;
}

/**
 * The state kept in static data, as a copy the poll may change freely, or undefined when there is
 * none yet or it belongs to another account, customer node or format (the trigger then starts anew).
 * Entries that are not what the trigger writes (a session id that is not one, a date that is not
 * one) are left out.
 */
export function readState(staticData: IDataObject, scope: string): TriggerState | undefined {
	const { version, listedAt, seen, pending, poller } =
		staticData.version === 1 ? fromVersion1(staticData) : staticData;
	if (version !== STATE_VERSION || staticData.scope !== scope || !isTime(listedAt))
		return undefined;
	if (!Array.isArray(seen) || !Array.isArray(pending)) return undefined;
	const state = newState(scope, listedAt);
	if (typeof poller === 'string' && POLLER_PATTERN.test(poller)) state.poller = poller;
	for (const entry of seen as unknown[]) {
		if (typeof entry !== 'object' || entry === null) continue;
		const { day, ids, until } = entry as IDataObject;
		if (!isDay(day) || !Array.isArray(ids)) continue;
		state.seen.set(day, (ids as unknown[]).filter(isSessionId));
		if (isTime(until)) state.seenUntil.set(day, until);
	}
	for (const entry of pending as unknown[]) {
		const session = readPending(entry);
		if (session) state.pending.set(session.id, session);
	}
	return state;
}

/**
 * Version 1 kept the seen ids and the pending sessions (with their records) in objects keyed by
 * date and by id: the same entries in the arrays of the current version, checked like them.
 */
function fromVersion1(staticData: IDataObject): IDataObject {
	const { seen, pending } = staticData;
	if (typeof seen !== 'object' || seen === null || typeof pending !== 'object' || pending === null)
		return {};
	const sessions = Object.values(pending).map((entry: unknown) => {
		const session = (typeof entry === 'object' && entry !== null ? entry : {}) as IDataObject;
		const record = (
			typeof session.record === 'object' && session.record !== null ? session.record : {}
		) as IDataObject;
		return { ...session, id: record.id, reportsErrors: reportsErrors(record) };
	});
	return {
		...staticData,
		version: STATE_VERSION,
		seen: Object.entries(seen).map(([day, ids]) => ({ day, ids })),
		pending: sessions,
	};
}

export function storedState(state: TriggerState): StoredState {
	return {
		version: state.version,
		scope: state.scope,
		poller: state.poller,
		listedAt: state.listedAt,
		seen: [...state.seen].map(([day, ids]) => {
			const until = state.seenUntil.get(day);
			return until === undefined ? { day, ids: [...ids] } : { day, ids: [...ids], until };
		}),
		pending: [...state.pending.values()].map((session) => ({ ...session })),
	};
}

/**
 * Replaces the stored state. Top-level keys are assigned (not nested ones changed in place) so that
 * n8n's change tracking of static data sees the change and saves it.
 */
export function writeState(staticData: IDataObject, state: TriggerState): void {
	const stored = storedState(state);
	staticData.version = stored.version;
	staticData.scope = stored.scope;
	staticData.poller = stored.poller;
	staticData.listedAt = stored.listedAt;
	staticData.seen = stored.seen;
	staticData.pending = stored.pending as unknown as IDataObject[];
}
