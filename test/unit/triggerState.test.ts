import {
	dueSessions,
	newState,
	planListing,
	prune,
	takeListing,
	type PendingSession,
} from '../../nodes/ProductDataIntegrationTrigger/state';
import { readState, writeState } from '../../nodes/ProductDataIntegrationTrigger/storedState';
import {
	followableRecords,
	type UploadRecord,
} from '../../nodes/ProductDataIntegrationTrigger/records';
import type { IDataObject } from 'n8n-workflow';

import { serviceDay } from '../../nodes/shared/uploads';

const at = (iso: string) => Date.parse(iso);
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
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
		expect(planListing(lastBeforeMidnight, at('2025-03-11T00:00:30Z'), UTC).days).toEqual([
			'2025-03-10',
			'2025-03-11',
		]);
		// A listing at 00:01 may still miss uploads the service dated yesterday (clock skew).
		expect(planListing(at('2025-03-11T00:01:00Z'), at('2025-03-11T00:02:00Z'), UTC).days).toEqual([
			'2025-03-10',
			'2025-03-11',
		]);
		expect(planListing(at('2025-03-11T00:06:00Z'), at('2025-03-11T00:07:00Z'), UTC).days).toEqual([
			'2025-03-11',
		]);
		// The first poll just after midnight records yesterday as known, since the next one lists it.
		expect(planListing(undefined, at('2025-03-11T00:02:00Z'), UTC).days).toEqual([
			'2025-03-10',
			'2025-03-11',
		]);
	});

	it('catches up after a pause, but never further back than yesterday', () => {
		const now = at('2025-03-11T09:00:00Z');
		expect(planListing(at('2025-03-10T18:00:00Z'), now, UTC)).toEqual({
			days: ['2025-03-10', '2025-03-11'],
		});
		expect(planListing(at('2025-03-07T18:00:00Z'), now, UTC)).toEqual({
			days: ['2025-03-10', '2025-03-11'],
			skippedFrom: '2025-03-07',
		});
	});

	it('does not list tomorrow when the clock went backwards', () => {
		const now = at('2025-03-10T12:00:00Z');
		expect(planListing(now + DAY, now, UTC)).toEqual({ days: ['2025-03-10'] });
	});
});

const A = '0b4c1c9e-3a57-4f0e-9d55-6c2f1d7e8a90';
const B = '1c5d2daf-4b68-4f1f-8e66-7d3f2e8f9ba1';

/** A pending session of a test, first seen `firstSeen`. */
function session(
	id: string,
	firstSeen: number,
	more: Partial<PendingSession> = {},
): PendingSession {
	return { id, day: serviceDay(firstSeen, UTC), firstSeen, ...more };
}

function pendingOf(...sessions: PendingSession[]): Map<string, PendingSession> {
	return new Map(sessions.map((entry) => [entry.id, entry]));
}

/** A session id for test number `n`. */
function sessionId(n: number): string {
	return `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
}

describe('trigger state: records', () => {
	it('keeps the records with a session id, oldest first, and names the ids it skips', () => {
		const a = record(A, '2025-03-10T10:00:00+00:00');
		const b = record(` ${B}\n`, '2025-03-10T11:00:00+02:00');
		expect(followableRecords([a, b]).records.map((r) => r.id)).toEqual([B, A]);
		expect(followableRecords([])).toEqual({ records: [], skippedIds: [] });
		expect(
			followableRecords([{ receivedAt: 'x' }, { id: '' }, { id: 'a' }, { value: 'text' }, a]),
		).toEqual({
			records: [a],
			skippedIds: [undefined, '', 'a', undefined],
		});
	});

	it('returns each id once, follows new sessions and keeps the error hint of their freshest record', () => {
		const now = at('2025-03-10T12:00:00Z');
		const state = newState('scope', now);
		const first = takeListing(state, '2025-03-10', [record(A, '2025-03-10T11:00:00Z')], now, true);
		expect(first.map((r) => r.id)).toEqual([A]);
		expect(state.pending.get(A)).toEqual({ id: A, day: '2025-03-10', firstSeen: now });

		const failed = record(A, '2025-03-10T11:00:00Z', [{ code: 'X' }]);
		const second = takeListing(
			state,
			'2025-03-10',
			[failed, record(B, '2025-03-10T11:30:00Z')],
			now + MINUTE,
			true,
		);
		expect(second.map((r) => r.id)).toEqual([B]);
		expect(state.pending.get(A)).toEqual({
			id: A,
			day: '2025-03-10',
			firstSeen: now,
			reportsErrors: true,
		});
		expect(state.seen.get('2025-03-10')).toEqual([A, B]);

		// An id listed under another date is still the same session.
		expect(
			takeListing(state, '2025-03-11', [record(B, '2025-03-10T11:30:00Z')], now, true),
		).toEqual([]);
	});

	it('takes a session it still follows for known, also once the ids of its day are pruned', () => {
		const now = at('2025-03-10T12:00:00Z');
		const state = newState('scope', now);
		takeListing(state, '2025-03-10', [record(A, '2025-03-10T11:00:00Z')], now, true);
		state.seen.delete('2025-03-10');

		expect(
			takeListing(state, '2025-03-10', [record(A, '2025-03-10T11:00:00Z')], now + 2 * MINUTE, true),
		).toEqual([]);
		expect(state.pending.get(A)).toEqual({ id: A, day: '2025-03-10', firstSeen: now });
	});

	it('does not follow sessions when finished uploads are not wanted', () => {
		const now = at('2025-03-10T12:00:00Z');
		const state = newState('scope', now);
		expect(
			takeListing(state, '2025-03-10', [record(A, '2025-03-10T11:00:00Z')], now, false),
		).toHaveLength(1);
		expect(state.pending.size).toBe(0);
	});
});

describe('trigger state: bounds', () => {
	it('forgets the ids of dates that are no longer listed', () => {
		const seen = () =>
			new Map([
				['2025-03-09', [A]],
				['2025-03-10', [B]],
				['2025-03-11', [sessionId(1)]],
			]);
		const state = newState('scope', 0);
		state.seen = seen();
		prune(state, at('2025-03-11T00:03:00Z'), UTC);
		expect([...state.seen.keys()].sort()).toEqual(['2025-03-10', '2025-03-11']);
		state.seen = seen();
		prune(state, at('2025-03-11T08:00:00Z'), UTC);
		expect([...state.seen.keys()]).toEqual(['2025-03-11']);
	});

	it('gives up sessions unfinished after 7 days', () => {
		const now = at('2025-03-20T08:00:00Z');
		const state = newState('scope', now);
		state.pending = pendingOf(session(A, now - 7 * DAY - 1), session(B, now - 7 * DAY));
		expect(prune(state, now, UTC).dropped).toEqual([{ id: A, reason: 'age' }]);
		expect([...state.pending.keys()]).toEqual([B]);
	});

	it('follows at most 2,000 sessions: a listing beyond that never evicts those already followed, in bounded static data', () => {
		const now = at('2025-03-20T08:00:00Z');
		const state = newState('scope', now);
		state.pending = pendingOf(session(A, now - DAY), session(B, now - DAY));
		const listing = Array.from({ length: 2_500 }, (_, i) =>
			record(sessionId(i), '2025-03-20T07:00:00Z', [{ code: 'X' }]),
		);
		expect(takeListing(state, '2025-03-20', listing, now, true)).toHaveLength(2_500);
		expect(prune(state, now, UTC).dropped).toEqual([]);
		expect(state.pending.size).toBe(2_000);
		expect(state.pending.has(A) && state.pending.has(B)).toBe(true);
		// The oldest of the new sessions are followed.
		expect(state.pending.has(sessionId(1_997)) && !state.pending.has(sessionId(1_998))).toBe(true);
		for (const pending of state.pending.values()) pending.lastChecked = now + MINUTE;
		// What the pending sessions cost in static data: at most 150 bytes each, whatever the service's records hold.
		const staticData: IDataObject = {};
		writeState(staticData, state);
		expect(JSON.stringify(staticData.pending).length).toBeLessThan(2_000 * 150);
	});

	it('keeps at most 5,000 ids of a date, the oldest dropped first, and still takes the dropped ones for known', () => {
		const now = at('2025-03-10T12:00:00Z');
		const state = newState('scope', now);
		const listing = (count: number) =>
			Array.from({ length: count }, (_, i) =>
				record(sessionId(i), new Date(at('2025-03-10T00:00:00Z') + i * 1000).toISOString()),
			);
		expect(takeListing(state, '2025-03-10', listing(20_000), now, false)).toHaveLength(20_000);
		const ids = state.seen.get('2025-03-10') ?? [];
		expect(ids).toHaveLength(5_000);
		expect([ids[0], ids.at(-1)]).toEqual([sessionId(15_000), sessionId(19_999)]);
		expect(
			takeListing(state, '2025-03-10', listing(20_001), now + MINUTE, false).map((r) => r.id),
		).toEqual([sessionId(20_000)]);
		// Another date's listing is not taken for known by this date's bound.
		expect(
			takeListing(
				state,
				'2025-03-11',
				[record(sessionId(30_000), '2025-03-10T00:00:00Z')],
				now,
				false,
			),
		).toHaveLength(1);

		const staticData: IDataObject = {};
		writeState(staticData, state);
		const stored = JSON.parse(JSON.stringify(staticData)) as IDataObject;
		expect(JSON.stringify(stored.seen).length).toBeLessThan(200_000);
		const reread = readState(stored, 'scope');
		expect(reread).toEqual(state);
		expect(
			reread && takeListing(reread, '2025-03-10', listing(20_001), now + 2 * MINUTE, false),
		).toEqual([]);
		// A new record without a readable time is not taken for one of the dropped ones.
		expect(
			takeListing(state, '2025-03-10', [record(sessionId(40_000), 'not a time')], now, false),
		).toHaveLength(1);
	});
});

describe('trigger state: checks', () => {
	const now = at('2025-03-10T12:00:00Z');
	const [checkedEarly, neverChecked, fresh, failing] = [1, 2, 3, 4].map(sessionId);

	it('checks hinted failures first, then whoever waits longest', () => {
		const state = newState('scope', now);
		state.pending = pendingOf(
			session(checkedEarly, now - 60 * MINUTE, { lastChecked: now - 20 * MINUTE }),
			session(neverChecked, now - 30 * MINUTE),
			session(fresh, now),
			session(failing, now, { reportsErrors: true }),
		);
		expect(dueSessions(state, now).map(({ id }) => id)).toEqual([
			failing,
			neverChecked,
			checkedEarly,
			fresh,
		]);
	});

	it('checks long-running sessions less often as they age, but at least every 5 minutes', () => {
		const [young, old, older] = [5, 6, 7].map(sessionId);
		const state = newState('scope', now);
		state.pending = pendingOf(
			session(young, now - 2 * MINUTE, { lastChecked: now - MINUTE }),
			// 40 minutes old when last checked: the next check waits 10 minutes, capped at the maximum.
			session(old, now - 44 * MINUTE, { lastChecked: now - 4 * MINUTE }),
			session(older, now - 120 * MINUTE, { lastChecked: now - 5 * MINUTE }),
		);
		expect(dueSessions(state, now).map(({ id }) => id)).toEqual([older, young]);
		expect(dueSessions(state, now + MINUTE).map(({ id }) => id)).toEqual([older, old, young]);
	});
});

describe('trigger state: storage', () => {
	it('survives a JSON round trip and belongs to one scope', () => {
		const now = at('2025-03-10T12:00:00Z');
		const state = newState('scope-a', now);
		takeListing(
			state,
			'2025-03-10',
			[record(A, '2025-03-10T11:00:00Z', [{ code: 'X' }])],
			now,
			true,
		);
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
		copy?.seen.set('2025-03-10', [A]);
		expect(staticData.seen).toEqual([]);
	});

	it('reads back only entries it could have written', () => {
		const now = at('2025-03-10T12:00:00Z');
		const stored = JSON.parse(
			JSON.stringify({
				version: 2,
				scope: 'scope',
				listedAt: now,
				seen: [
					{ day: '__proto__', ids: [A] },
					{ day: '2025-03-10', ids: [A, '__proto__', 7] },
					null,
				],
				pending: [
					session(A, now),
					{ id: 'constructor', day: '2025-03-10', firstSeen: now },
					{ id: B, day: '..', firstSeen: now },
					'x',
				],
			}),
		) as IDataObject;
		const state = readState(stored, 'scope');
		expect(state?.seen).toEqual(new Map([['2025-03-10', [A]]]));
		expect(state?.pending).toEqual(pendingOf(session(A, now)));
	});
});

describe('trigger state: the previous version', () => {
	it('keeps the seen ids and pending sessions of version 1, without their records', () => {
		const now = at('2025-03-10T12:00:00Z');
		const stored = JSON.parse(
			JSON.stringify({
				version: 1,
				scope: 'scope',
				listedAt: now,
				seen: { '2025-03-10': [A, B, 'x'] },
				pending: {
					[A]: {
						record: record(A, '2025-03-10T11:00:00Z', [{ code: 'X' }]),
						day: '2025-03-10',
						firstSeen: now,
						lastChecked: now,
					},
					x: { record: record('x', '2025-03-10T11:00:00Z'), day: '2025-03-10', firstSeen: now },
				},
			}),
		) as IDataObject;
		const state = readState(stored, 'scope');
		expect(state?.seen).toEqual(new Map([['2025-03-10', [A, B]]]));
		expect(state?.pending).toEqual(
			pendingOf(session(A, now, { lastChecked: now, reportsErrors: true })),
		);
		expect(readState({ ...stored, pending: null }, 'scope')).toBeUndefined();
	});
});
