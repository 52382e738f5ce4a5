import { sleep } from 'n8n-workflow';

import {
	backoffDelay,
	GcraLimiter,
	LimiterCancelledError,
	parseRetryAfter,
	retryAfterPenalty,
	type BucketTerms,
	type Sleep,
} from '../../nodes/shared/throttle';
import { limiterFor } from '../../nodes/shared/fullEdition/sharedRegistry';
import { proveHolder } from '../../nodes/shared/throttle/registry';
import { accountKey } from '../../nodes/shared/transport';
import { holderKey } from '../../nodes/shared/transport/account';
import { FakeClock, flush } from '../helpers/clock';

/** The process-wide limiter of an account, found as the transport finds it (its waits: `wait`). */
function throttleFor(baseUrl: string, username: string, terms: BucketTerms, wait: Sleep = sleep) {
	return limiterFor(accountKey(baseUrl, username), { holder: 'holder', terms }, {}, wait);
}

/** A sleep that ends only when cancelled: what has to wait, waits, and no real time passes. */
const endlessSleep: Sleep = async (_ms, signal) =>
	await new Promise((_resolve, reject) =>
		signal?.addEventListener('abort', () => reject(new Error('cancelled'))),
	);

const T = 5000;
// Requests leave 1 % slower than the service drains (one per 1.01 leak intervals), so jitter never lands one on a full bucket.
const EMISSION = T * 1.01;
const EMISSION_1S = 1000 * 1.01;

/** Starts `count` acquisitions and records when (fake time) each one was granted. */
function startRequests(throttle: GcraLimiter, clock: FakeClock, count: number, label = '') {
	const grants: Array<{ label: string; index: number; at: number }> = [];
	const promises = Array.from({ length: count }, (_, index) =>
		throttle.acquire().then(() => {
			grants.push({ label, index, at: clock.now() });
		}),
	);
	return { grants, done: Promise.all(promises) };
}

describe('GcraLimiter (GCRA)', () => {
	it('lets the first 50 go at once, then exactly one per interval, none early', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 50, intervalMs: T }, clock);
		const start = clock.now();
		const { grants, done } = startRequests(throttle, clock, 120);
		await flush();
		expect(grants).toHaveLength(50);
		expect(grants.every((g) => g.at === start)).toBe(true);

		// Just before the 51st is due nothing more may go.
		await clock.advance(EMISSION - 1);
		expect(grants).toHaveLength(50);

		await clock.advance(70 * EMISSION);
		await done;
		expect(grants).toHaveLength(120);
		for (let k = 50; k < 120; k++) {
			const due = start + (k - 49) * EMISSION;
			expect(grants[k].at).toBeGreaterThanOrEqual(due);
			// Granted by the one timer exactly when due (ceil to whole ms).
			expect(grants[k].at - due).toBeLessThan(1);
		}
		// The margin costs at most 2% of throughput.
		const steadyRate = (grants[119].at - grants[50].at) / 69;
		expect(steadyRate / T).toBeLessThanOrEqual(1.02);
		expect(clock.pendingTimers).toBe(0);
	});

	it('serves waiters in arrival order', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 2, intervalMs: 100 }, clock);
		const order: number[] = [];
		const all = Array.from({ length: 8 }, (_, i) => throttle.acquire().then(() => order.push(i)));
		await clock.advance(2000);
		await Promise.all(all);
		expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
	});

	it('a later caller waits behind earlier ones even when it arrives as a slot frees', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 1, intervalMs: 100 }, clock);
		const order: string[] = [];
		await throttle.acquire();
		const first = throttle.acquire().then(() => order.push('first'));
		await clock.advance(50);
		const second = throttle.acquire().then(() => order.push('second'));
		await clock.advance(500);
		await Promise.all([first, second]);
		expect(order).toEqual(['first', 'second']);
	});

	it('regains burst allowance after an idle period, never more than the capacity', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 5, intervalMs: 100 }, clock);
		const first = startRequests(throttle, clock, 5);
		await first.done;
		await clock.advance(10_000);
		const second = startRequests(throttle, clock, 6);
		await flush();
		expect(second.grants).toHaveLength(5);
		await clock.advance(200);
		await second.done;
	});

	it('an aborted wait rejects, takes no slot and lets the next waiter move up', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 1, intervalMs: 1000 }, clock);
		await throttle.acquire();
		const controller = new AbortController();
		const aborted = throttle.acquire({ signal: controller.signal });
		const next = throttle.acquire();
		let nextAt = 0;
		void next.then(() => {
			nextAt = clock.now();
		});
		const start = clock.now();
		await clock.advance(300);
		controller.abort();
		await expect(aborted).rejects.toBeInstanceOf(LimiterCancelledError);
		await clock.advance(2000);
		await next;
		// The cancelled waiter did not consume the slot at start + 1000.
		expect(nextAt).toBe(start + Math.ceil(1000 * 1.01));
	});

	it('a request that would wait longer than 15 minutes fails at once, naming the wait', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 1, intervalMs: 60_000 }, clock);
		const emission = 60_000 * 1.01;
		await throttle.acquire();
		// Fourteen more are within 15 minutes (14 x 60.6 s); the fifteenth would wait 15.15 minutes.
		const within = Array.from({ length: 14 }, () => throttle.acquire());
		const outcome = await Promise.race([
			throttle.acquire().catch((error: Error) => error),
			flush().then(() => 'waiting'),
		]);
		expect(outcome).toBeInstanceOf(Error);
		expect((outcome as Error).message).toMatch(
			/would wait more than 15 min for the account's rate limit.*at most 15 min/,
		);
		await clock.advance(14 * emission);
		await Promise.all(within);
	});

	it('a request whose turn refusals pushed back fails once it has waited 15 minutes', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 1, intervalMs: 1000 }, clock);
		await throttle.acquire();
		const start = clock.now();
		let failedAt = 0;
		const waiting = throttle.acquire().catch((error: Error) => {
			failedAt = clock.now();
			return error;
		});
		await clock.advance(1000);
		// Retry-After of 15 minutes, as long as the transport honours.
		void throttle.penalize(15 * 60_000);
		await clock.advance(15 * 60_000);
		const outcome = await waiting;
		expect(outcome).toBeInstanceOf(Error);
		expect((outcome as Error).message).toMatch(
			/would wait more than 15 min .*refusals of the service or a slower pace pushed its turn back/,
		);
		expect(failedAt - start).toBe(15 * 60_000);
		expect(clock.pendingTimers).toBe(0);
	});

	it('an already aborted signal is refused at once', async () => {
		const throttle = new GcraLimiter({ capacity: 1, intervalMs: 1000 }, new FakeClock());
		const controller = new AbortController();
		controller.abort();
		await expect(throttle.acquire({ signal: controller.signal })).rejects.toBeInstanceOf(
			LimiterCancelledError,
		);
	});

	it('penalize without Retry-After: next request one interval later, burst allowance gone', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 50, intervalMs: 1000 }, clock);
		await throttle.acquire();
		const start = clock.now();
		void throttle.penalize();
		const { grants, done } = startRequests(throttle, clock, 3);
		await clock.advance(1000 * 1.01 - 1);
		expect(grants).toHaveLength(0);
		await clock.advance(5000);
		await done;
		const emission = 1000 * 1.01;
		expect(grants.map((g) => g.at - start)).toEqual([
			Math.ceil(emission),
			Math.ceil(2 * emission),
			Math.ceil(3 * emission),
		]);
	});

	it('penalize with a Retry-After waits that long, then one per interval', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 50, intervalMs: 1000 }, clock);
		const start = clock.now();
		void throttle.penalize(7000);
		const { grants, done } = startRequests(throttle, clock, 2);
		await clock.advance(6999);
		expect(grants).toHaveLength(0);
		await clock.advance(3000);
		await done;
		expect(grants[0].at - start).toBe(7000);
		expect(grants[1].at - grants[0].at).toBeGreaterThanOrEqual(1000);
	});

	it('penalties from several refused requests do not add up', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 50, intervalMs: 1000 }, clock);
		const start = clock.now();
		void throttle.penalize(2000);
		void throttle.penalize(2000);
		void throttle.penalize(2000);
		expect(throttle.delayFor()).toBe(2000);
		await clock.advance(2000);
		await throttle.acquire();
		expect(clock.now() - start).toBe(2000);
	});

	it('a penalty given while requests wait moves the waiting ones too', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 1, intervalMs: 100 }, clock);
		await throttle.acquire();
		const start = clock.now();
		const { grants, done } = startRequests(throttle, clock, 1);
		await clock.advance(50);
		void throttle.penalize(1000);
		await clock.advance(5000);
		await done;
		expect(grants[0].at - start).toBe(1050);
	});

	it('logs the expected wait through the given logger', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 1, intervalMs: 1000 }, clock);
		const lines: Array<{ message: string; meta?: Record<string, unknown> }> = [];
		const logger = {
			debug: (message: string, meta?: Record<string, unknown>) => lines.push({ message, meta }),
		};
		await throttle.acquire({ logger });
		expect(lines).toHaveLength(0);
		const waiting = throttle.acquire({ logger });
		expect(lines).toHaveLength(1);
		expect(lines[0].meta).toEqual({ expectedWaitMs: 1010, queued: 1 });
		await clock.advance(2000);
		await waiting;
	});

	it('follows edited terms without forgetting what was sent', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 2, intervalMs: 1000 }, clock);
		await throttle.acquire();
		await throttle.acquire();
		throttle.setTerms({ capacity: 3, intervalMs: 1000 });
		expect(throttle.delayFor()).toBe(0);
		await throttle.acquire();
		expect(throttle.delayFor()).toBeGreaterThan(0);
	});

	it('a slow first request of a busy period delays the ones after the burst by its lateness', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 2, intervalMs: 1000 }, clock);
		const start = clock.now();
		const first = await throttle.acquire();
		const second = await throttle.acquire();
		const nextAllowedAt = () => clock.now() + throttle.delayFor();
		expect(nextAllowedAt()).toBeCloseTo(start + EMISSION_1S);
		await clock.advance(30);
		void second.settle();
		expect(nextAllowedAt()).toBeCloseTo(start + EMISSION_1S);
		void first.settle();
		expect(nextAllowedAt()).toBeCloseTo(start + EMISSION_1S + 30);
		void first.settle();
		expect(nextAllowedAt()).toBeCloseTo(start + EMISSION_1S + 30);
	});

	it('the lateness correction is at most one interval (a long upload counts from its start)', async () => {
		const clock = new FakeClock();
		const throttle = new GcraLimiter({ capacity: 2, intervalMs: 1000 }, clock);
		const upload = await throttle.acquire();
		await throttle.acquire();
		await clock.advance(5000);
		void upload.settle();
		expect(throttle.delayFor()).toBe(0);
	});

	it('refuses impossible terms', () => {
		expect(() => new GcraLimiter({ capacity: 0, intervalMs: 1000 }, new FakeClock())).toThrow(
			RangeError,
		);
		expect(() => new GcraLimiter({ capacity: 5, intervalMs: 0 }, new FakeClock())).toThrow(
			RangeError,
		);
	});
});

describe('process-wide limiters', () => {
	it('two executions using one account share one limiter', async () => {
		const a = throttleFor(
			'https://svc.example.com',
			'shared-user',
			{ capacity: 50, intervalMs: 5000 },
			endlessSleep,
		);
		const b = throttleFor(
			'https://svc.example.com/',
			'shared-user',
			{ capacity: 50, intervalMs: 5000 },
			endlessSleep,
		);
		expect(b).toBe(a);
		for (let i = 0; i < 30; i++) await a.acquire();
		for (let i = 0; i < 20; i++) await b.acquire();
		// The 51st request of the account, whichever execution sends it, has to wait.
		const controller = new AbortController();
		let granted = false;
		const next = a.acquire({ signal: controller.signal }).then(() => (granted = true));
		await flush();
		controller.abort();
		await next.catch(() => undefined);
		expect(granted).toBe(false);
	});

	it('distinct usernames or base URLs get distinct limiters', () => {
		const terms = { capacity: 50, intervalMs: 5000 };
		const base = throttleFor('https://svc.example.com', 'user-a', terms);
		expect(throttleFor('https://svc.example.com', 'user-b', terms)).not.toBe(base);
		expect(throttleFor('https://test.svc.example.com', 'user-a', terms)).not.toBe(base);
		expect(accountKey('https://svc.example.com', 'user-a')).not.toContain('user-a');
	});

	it('two credentials of one account: the strictest terms either declares, once the service has accepted its password', () => {
		const key = accountKey('https://terms.example.com', 'user');
		const start = 1_000_000;
		const first = limiterFor(
			key,
			{ holder: 'first', terms: { capacity: 50, intervalMs: 5000 } },
			{},
			sleep,
			start,
		);
		proveHolder(key, 'first', start);
		expect(
			limiterFor(
				key,
				{ holder: 'second', terms: { capacity: 10, intervalMs: 2000 } },
				{},
				sleep,
				start + 1000,
			),
		).toBe(first);
		expect(first.getTerms()).toEqual({ capacity: 50, intervalMs: 5000 });
		first.setTerms(proveHolder(key, 'second', start + 1000));
		expect(first.getTerms()).toEqual({ capacity: 10, intervalMs: 5000 });
		// Used again, the first keeps counting; terms no credential used for an hour stop counting.
		limiterFor(
			key,
			{ holder: 'first', terms: { capacity: 50, intervalMs: 5000 } },
			{},
			sleep,
			start + 30 * 60_000,
		);
		expect(first.getTerms()).toEqual({ capacity: 10, intervalMs: 5000 });
		limiterFor(
			key,
			{ holder: 'first', terms: { capacity: 50, intervalMs: 5000 } },
			{},
			sleep,
			start + 62 * 60_000,
		);
		expect(first.getTerms()).toEqual({ capacity: 50, intervalMs: 5000 });
	});

	it('terms whose password the service has not accepted hold nobody back: the loosest with the standard terms until one has', () => {
		const key = accountKey('https://unproven.example.com', 'user');
		const start = 1_000_000;
		const limiter = limiterFor(
			key,
			{ holder: 'stranger', terms: { capacity: 1, intervalMs: 900_000 } },
			{},
			sleep,
			start,
		);
		expect(limiter.getTerms()).toEqual({ capacity: 50, intervalMs: 5000 });
		limiterFor(
			key,
			{ holder: 'owner', terms: { capacity: 10, intervalMs: 60_000 } },
			{},
			sleep,
			start,
		);
		limiter.setTerms(proveHolder(key, 'owner', start));
		expect(limiter.getTerms()).toEqual({ capacity: 10, intervalMs: 60_000 });
		limiterFor(
			key,
			{ holder: 'stranger', terms: { capacity: 1, intervalMs: 900_000 } },
			{},
			sleep,
			start + 1000,
		);
		expect(limiter.getTerms()).toEqual({ capacity: 10, intervalMs: 60_000 });
		limiterFor(
			key,
			{ holder: 'stranger', terms: { capacity: 10_000, intervalMs: 1 } },
			{},
			sleep,
			start + 2000,
		);
		expect(limiter.getTerms()).toEqual({ capacity: 10, intervalMs: 60_000 });
	});

	it('whoever holds the password is named by a keyed digest of it, the username exactly as written', () => {
		const base = 'https://holder.example.com';
		const owner = holderKey(base, 'alice', 'secret');
		expect(holderKey('HTTPS://HOLDER.example.com/', 'alice', 'secret')).toBe(owner);
		expect(holderKey(base, 'alice', 'other')).not.toBe(owner);
		expect(holderKey('https://other.example.com', 'alice', 'secret')).not.toBe(owner);
		expect(
			new Set([owner, holderKey(base, 'ALICE', 'secret'), holderKey(base, ' alice ', 'secret')])
				.size,
		).toBe(3);
		expect(owner).toMatch(/^[0-9a-f]{64}$/);
		expect(owner).not.toContain(Buffer.from('secret').toString('hex'));
		// The bucket stays the account's, whoever sends: the service meters the account.
		expect(accountKey(base, ' ALICE ')).toBe(accountKey(base, 'alice'));
	});

	it('what the service may take for one account is one limiter: Base URL spelling, username case', () => {
		const terms = { capacity: 50, intervalMs: 5000 };
		const base = throttleFor('https://same.example.com/prefix', 'Integration-User', terms);
		expect(throttleFor('HTTPS://SAME.example.com:443/prefix/', ' integration-user ', terms)).toBe(
			base,
		);
		expect(throttleFor('https://same.example.com/Prefix', 'integration-user', terms)).not.toBe(
			base,
		);
	});
});

describe('Retry-After', () => {
	const now = Date.parse('2025-03-01T12:00:00Z');

	it('reads delta seconds', () => {
		expect(parseRetryAfter('5', now)).toBe(5000);
		expect(parseRetryAfter(' 0 ', now)).toBe(0);
		expect(parseRetryAfter('1.5', now)).toBe(1500);
	});

	it('reads an HTTP date', () => {
		expect(parseRetryAfter('Sat, 01 Mar 2025 12:00:07 GMT', now)).toBe(7000);
		expect(parseRetryAfter('Sat, 01 Mar 2025 11:59:00 GMT', now)).toBe(0);
	});

	it('ignores absent or unreadable values', () => {
		expect(parseRetryAfter(undefined, now)).toBeUndefined();
		expect(parseRetryAfter('', now)).toBeUndefined();
		expect(parseRetryAfter('soon', now)).toBeUndefined();
		expect(parseRetryAfter('-3', now)).toBeUndefined();
	});

	it('honours the header in full when the leak interval is a second or longer', () => {
		expect(retryAfterPenalty(5000, 5000)).toBe(5000);
		expect(retryAfterPenalty(1000, 5000)).toBe(1000);
		expect(retryAfterPenalty(30_000, 1000)).toBe(30_000);
		expect(retryAfterPenalty(undefined, 5000)).toBeUndefined();
	});

	it('reads whole seconds as "within that second" when the interval is shorter than a second', () => {
		// A server that rounds up cannot say "20 ms": "1" means somewhere in the next second.
		expect(retryAfterPenalty(1000, 20)).toBe(20);
		expect(retryAfterPenalty(3000, 20)).toBe(2000);
		expect(retryAfterPenalty(0, 20)).toBe(0);
	});
});

describe('backoff', () => {
	it('stays within [ceiling/2, ceiling] and doubles per attempt', () => {
		for (const random of [0, 0.25, 0.5, 0.999]) {
			for (let attempt = 1; attempt <= 6; attempt++) {
				const ceiling = Math.min(60_000, 1000 * 2 ** (attempt - 1));
				const delay = backoffDelay(attempt, 1000, 60_000, () => random);
				expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
				expect(delay).toBeLessThanOrEqual(ceiling);
			}
		}
		expect(backoffDelay(1, 1000, 60_000, () => 0)).toBe(500);
		expect(backoffDelay(3, 1000, 60_000, () => 1)).toBe(4000);
	});

	it('never exceeds the cap', () => {
		expect(backoffDelay(30, 1000, 60_000, () => 1)).toBe(60_000);
	});

	it('spreads callers that fail together', () => {
		const delays = new Set(Array.from({ length: 20 }, () => backoffDelay(2, 1000, 60_000)));
		expect(delays.size).toBeGreaterThan(1);
	});
});
