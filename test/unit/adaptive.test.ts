import { AdaptiveLimiter } from '../../nodes/shared/throttle/adaptive';
import type { BucketTerms, RateLimiter, ScheduleHandOver } from '../../nodes/shared/throttle';

/** Records the terms the adaptive limiter hands its inner limiter. */
class RecordingLimiter implements RateLimiter, ScheduleHandOver {
	terms: BucketTerms = { capacity: 0, intervalMs: 0 };

	penalties: Array<number | undefined> = [];

	async acquire() {
		return { settle: async () => undefined };
	}

	async penalize(retryAfterMs?: number) {
		this.penalties.push(retryAfterMs);
	}

	getTerms() {
		return this.terms;
	}

	setTerms(terms: BucketTerms) {
		this.terms = terms;
	}

	async bookAhead() {}
}

const TERMS = { capacity: 10, intervalMs: 100 };
const DRAIN_MS = 1000;

function setUp(terms = TERMS) {
	let now = 1_000_000;
	const inner = new RecordingLimiter();
	const limiter = new AdaptiveLimiter(inner, terms, () => now);
	limiter.setTerms(terms);
	return { inner, limiter, advance: (ms: number) => (now += ms) };
}

test('refusals once (a bucket someone filled) leave the pace alone; refusals again halve it, at most once a second', async () => {
	const { inner, limiter, advance } = setUp();
	await limiter.penalize(500);
	expect(inner.terms).toEqual(TERMS);
	expect(inner.penalties).toEqual([500]);
	advance(1000);
	await limiter.penalize();
	expect(inner.terms).toEqual({ capacity: 10, intervalMs: 200 });
	advance(300);
	await limiter.penalize();
	expect(inner.terms.intervalMs).toBe(200);
	advance(700);
	await limiter.penalize();
	// 1 s after the halving: 2 x (what is left of it after one drain: 1.5) = 3.
	expect(inner.terms.intervalMs).toBeCloseTo(300);
	// The account's terms stay what the credential says.
	expect(limiter.getTerms()).toEqual(TERMS);
	// Long after (more than two drains), refusals count as once again.
	advance(10 * DRAIN_MS);
	await limiter.penalize();
	await limiter.acquire();
	expect(inner.terms.intervalMs).toBe(100);
});

test('the pace recovers half of what it lost every time the bucket would have drained, then snaps back', async () => {
	const { inner, limiter, advance } = setUp();
	await limiter.penalize();
	advance(1000);
	await limiter.penalize();
	advance(DRAIN_MS);
	await limiter.acquire();
	expect(inner.terms.intervalMs).toBeCloseTo(150);
	advance(5 * DRAIN_MS);
	await limiter.acquire();
	expect(inner.terms.intervalMs).toBe(100);
});

test('at most sixteen times slower', async () => {
	// A bucket that drains in 10 s: refusals a second apart nearly double the pace each time.
	const { inner, limiter, advance } = setUp({ capacity: 100, intervalMs: 100 });
	await limiter.penalize();
	for (let i = 0; i < 5; i++) {
		advance(1000);
		await limiter.penalize();
	}
	expect(inner.terms.intervalMs).toBe(1600);
	advance(1000);
	await limiter.penalize();
	expect(inner.terms.intervalMs).toBe(1600);
});
