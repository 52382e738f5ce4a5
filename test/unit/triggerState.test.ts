import {
	DAY_MS,
	dueSessions,
	followableRecords,
	MAX_RECHECK_INTERVAL_MS,
	newState,
	PENDING_MAX_AGE_MS,
	PENDING_MAX_COUNT,
	planListing,
	prune,
	readState,
	takeListing,
	writeState,
	type UploadRecord,
} from '../../nodes/ProductDataIntegrationTrigger/state';
import type { IDataObject } from 'n8n-workflow';

import { serviceDay } from '../../nodes/shared/uploads';

const at = (iso: string) => Date.parse(iso);
const MINUTE = 60_000;
const UTC = 'UTC';

function record(id: string, receivedAt: string, errors: unknown[] = []): UploadRecord {
	return { id, receivedAt, fileLenght: 10, errors } as UploadRecord;
}

describe('trigger state: dates', () => {
	it('names dates in the service time zone whatever the offset of the timestamp', () => {
		expect(serviceDay(at('2025-03-10T23:30:00-02:00'), UTC)).toBe('2025-03-11');
		expect(serviceDay(at('2025-03-11T00:30:00+02:00'), UTC)).toBe('2025-03-10');
		expect(serviceDay(at('2025-03-11T00:30:00+02:00'), 'Europe/Berlin')).toBe('2025-03-10');
		expect(serviceDay(at('2025-03-10T23:30:00Z'), 'Europe/Berlin')).toBe('2025-03-11');
	});

	it('moves midnight with the service time zone', () => {
		// 23:02 UTC is 00:02 in Berlin (UTC+1 in March): the first poll of the Berlin day lists yesterday too.
		const now = at('2025-03-10T23:02:00Z');
		expect(planListing(undefined, now, UTC).days).toEqual(['2025-03-10']);
		expect(planListing(undefined, now, 'Europe/Berlin').days).toEqual(['2025-03-10', '2025-03-11']);
		expect(planListing(undefined, now, 'Pacific/Kiritimati').days).toEqual(['2025-03-11']);
	});

	it('lists only today during the day', () => {
		const now = at('2025-03-10T12:00:00Z');
		expect(planListing(now - MINUTE, now, UTC)).toEqual({ days: ['2025-03-10'] });
		expect(planListing(undefined, now, UTC)).toEqual({ days: ['2025-03-10'] });
	});

	it('lists yesterday too until a listing made well after midnight has been read', () => {
		const lastBeforeMidnight = at('2025-03-10T23:59:00Z');
		expect(planListing(lastBeforeMidnight, at('2025-03-11T00:00:30Z'), UTC).days).toEqual(['2025-03-10', '2025-03-11']);
		// A listing at 00:01 may still miss uploads the service dated yesterday (clock skew).
		expect(planListing(at('2025-03-11T00:01:00Z'), at('2025-03-11T00:02:00Z'), UTC).days).toEqual([
			'2025-03-10',
			'2025-03-11',
		]);
		expect(planListing(at('2025-03-11T00:06:00Z'), at('2025-03-11T00:07:00Z'), UTC).days).toEqual(['2025-03-11']);
		// The first poll just after midnight records yesterday as known, since the next one lists it.
		expect(planListing(undefined, at('2025-03-11T00:02:00Z'), UTC).days).toEqual(['2025-03-10', '2025-03-11']);
	});

	it('catches up after a pause, but never further back than yesterday', () => {
		const now = at('2025-03-11T09:00:00Z');
		expect(planListing(at('2025-03-10T18:00:00Z'), now, UTC)).toEqual({ days: ['2025-03-10', '2025-03-11'] });
		expect(planListing(at('2025-03-07T18:00:00Z'), now, UTC)).toEqual({
			days: ['2025-03-10', '2025-03-11'],
			skippedFrom: '2025-03-07',
		});
	});

	it('does not list tomorrow when the clock went backwards', () => {
		const now = at('2025-03-10T12:00:00Z');
		expect(planListing(now + DAY_MS, now, UTC)).toEqual({ days: ['2025-03-10'] });
	});
});

describe('trigger state: records', () => {
	it('keeps the records with a session id, oldest first', () => {
		const a = record('a', '2025-03-10T10:00:00+00:00');
		const b = record('b', '2025-03-10T11:00:00+02:00');
		expect(followableRecords([a, b]).map((r) => r.id)).toEqual(['b', 'a']);
		expect(followableRecords([])).toEqual([]);
		expect(followableRecords([{ receivedAt: 'x' }, { id: '' }, { value: 'text' }, a])).toEqual([a]);
	});

	it('returns each id once, follows new sessions and keeps their freshest record', () => {
		const now = at('2025-03-10T12:00:00Z');
		const state = newState('scope', now);
		const first = takeListing(state, '2025-03-10', [record('a', '2025-03-10T11:00:00Z')], now, true);
		expect(first.map((r) => r.id)).toEqual(['a']);
		expect(state.pending.a).toMatchObject({ day: '2025-03-10', firstSeen: now });

		const failed = record('a', '2025-03-10T11:00:00Z', [{ code: 'X' }]);
		const second = takeListing(state, '2025-03-10', [failed, record('b', '2025-03-10T11:30:00Z')], now + MINUTE, true);
		expect(second.map((r) => r.id)).toEqual(['b']);
		expect(state.pending.a.record).toBe(failed);
		expect(state.pending.a.firstSeen).toBe(now);
		expect(state.seen['2025-03-10']).toEqual(['a', 'b']);

		// An id listed under another date is still the same session.
		expect(takeListing(state, '2025-03-11', [record('b', '2025-03-10T11:30:00Z')], now, true)).toEqual([]);
	});

	it('does not follow sessions when finished uploads are not wanted', () => {
		const now = at('2025-03-10T12:00:00Z');
		const state = newState('scope', now);
		expect(takeListing(state, '2025-03-10', [record('a', '2025-03-10T11:00:00Z')], now, false)).toHaveLength(1);
		expect(state.pending).toEqual({});
	});
});

describe('trigger state: bounds', () => {
	it('forgets the ids of dates that are no longer listed', () => {
		const seen = () => ({ '2025-03-09': ['x'], '2025-03-10': ['y'], '2025-03-11': ['z'] });
		const state = newState('scope', 0);
		state.seen = seen();
		prune(state, at('2025-03-11T00:03:00Z'), UTC);
		expect(Object.keys(state.seen).sort()).toEqual(['2025-03-10', '2025-03-11']);
		state.seen = seen();
		prune(state, at('2025-03-11T08:00:00Z'), UTC);
		expect(Object.keys(state.seen)).toEqual(['2025-03-11']);
	});

	it('gives up sessions unfinished after the age limit', () => {
		const now = at('2025-03-20T08:00:00Z');
		const state = newState('scope', now);
		state.pending = {
			old: { record: record('old', '2025-03-12T00:00:00Z'), day: '2025-03-12', firstSeen: now - PENDING_MAX_AGE_MS - 1 },
			young: { record: record('young', '2025-03-19T00:00:00Z'), day: '2025-03-19', firstSeen: now - DAY_MS },
		};
		expect(prune(state, now, UTC).dropped).toEqual([{ id: 'old', reason: 'age' }]);
		expect(Object.keys(state.pending)).toEqual(['young']);
	});

	it('follows at most a bounded number of sessions, dropping the oldest', () => {
		const now = at('2025-03-20T08:00:00Z');
		const state = newState('scope', now);
		for (let i = 0; i < PENDING_MAX_COUNT + 3; i++) {
			const id = `s${i}`;
			state.pending[id] = { record: record(id, '2025-03-20T07:00:00Z'), day: '2025-03-20', firstSeen: now - DAY_MS + i };
		}
		const { dropped } = prune(state, now, UTC);
		expect(dropped).toEqual([
			{ id: 's0', reason: 'count' },
			{ id: 's1', reason: 'count' },
			{ id: 's2', reason: 'count' },
		]);
		expect(Object.keys(state.pending)).toHaveLength(PENDING_MAX_COUNT);
	});
});

describe('trigger state: checks', () => {
	const now = at('2025-03-10T12:00:00Z');

	it('checks hinted failures first, then whoever waits longest', () => {
		const state = newState('scope', now);
		state.pending = {
			checkedEarly: { record: record('checkedEarly', '2025-03-10T09:00:00Z'), day: '2025-03-10', firstSeen: now - 60 * MINUTE, lastChecked: now - 20 * MINUTE },
			neverChecked: { record: record('neverChecked', '2025-03-10T11:00:00Z'), day: '2025-03-10', firstSeen: now - 30 * MINUTE },
			fresh: { record: record('fresh', '2025-03-10T11:59:00Z'), day: '2025-03-10', firstSeen: now },
			failing: { record: record('failing', '2025-03-10T11:59:30Z', [{ code: 'X' }]), day: '2025-03-10', firstSeen: now },
		};
		expect(dueSessions(state, now).map(([id]) => id)).toEqual(['failing', 'neverChecked', 'checkedEarly', 'fresh']);
	});

	it('checks long-running sessions less often as they age, but at least every few minutes', () => {
		const state = newState('scope', now);
		state.pending = {
			young: { record: record('young', '2025-03-10T11:58:00Z'), day: '2025-03-10', firstSeen: now - 2 * MINUTE, lastChecked: now - MINUTE },
			// 40 minutes old when last checked: the next check waits 10 minutes, capped at the maximum.
			old: { record: record('old', '2025-03-10T11:00:00Z'), day: '2025-03-10', firstSeen: now - 44 * MINUTE, lastChecked: now - 4 * MINUTE },
			older: { record: record('older', '2025-03-10T10:00:00Z'), day: '2025-03-10', firstSeen: now - 120 * MINUTE, lastChecked: now - MAX_RECHECK_INTERVAL_MS },
		};
		expect(dueSessions(state, now).map(([id]) => id)).toEqual(['older', 'young']);
		expect(dueSessions(state, now + MINUTE).map(([id]) => id)).toEqual(['older', 'old', 'young']);
	});
});

describe('trigger state: storage', () => {
	it('survives a JSON round trip and belongs to one scope', () => {
		const now = at('2025-03-10T12:00:00Z');
		const state = newState('scope-a', now);
		takeListing(state, '2025-03-10', [record('a', '2025-03-10T11:00:00Z')], now, true);
		const staticData: IDataObject = {};
		writeState(staticData, state);
		const stored = JSON.parse(JSON.stringify(staticData)) as IDataObject;
		expect(readState(stored, 'scope-a')).toEqual(state);
		expect(readState(stored, 'scope-b')).toBeUndefined();
		expect(readState({}, 'scope-a')).toBeUndefined();
		expect(readState({ ...stored, version: 99 }, 'scope-a')).toBeUndefined();
	});

	it('hands out a copy: changing it leaves the stored state alone until written', () => {
		const now = at('2025-03-10T12:00:00Z');
		const staticData: IDataObject = {};
		writeState(staticData, newState('scope', now));
		const copy = readState(staticData, 'scope');
		expect(copy).toBeDefined();
		(copy as NonNullable<typeof copy>).seen.x = ['y'];
		expect(staticData.seen).toEqual({});
	});
});
