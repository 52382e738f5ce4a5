/**
 * Leaky bucket as a meter: every admitted request pours one message in, the bucket drains one
 * message per leak interval, continuously. Levels are kept in milliseconds of drain time
 * (level * interval) so the arithmetic stays exact on integers: a full bucket of capacity 50 admits
 * the next request exactly one interval later, not a millisecond before.
 */
export interface BucketDecision {
	admitted: boolean;
	/** Level in messages right after the decision (fractional while draining). */
	level: number;
	/** When refused: milliseconds until one message has drained. */
	retryAfterMs: number;
}

interface BucketState {
	fillMs: number;
	updatedAt: number;
}

export class LeakyBuckets {
	private readonly buckets = new Map<string, BucketState>();

	constructor(
		private readonly capacity: number,
		private readonly intervalMs: number,
	) {}

	private drained(key: string, now: number): BucketState {
		const state = this.buckets.get(key) ?? { fillMs: 0, updatedAt: now };
		// A clock moved backwards (manual clock set to an earlier time) must not refill the bucket.
		const elapsed = Math.max(0, now - state.updatedAt);
		state.fillMs = Math.max(0, state.fillMs - elapsed);
		state.updatedAt = Math.max(state.updatedAt, now);
		this.buckets.set(key, state);
		return state;
	}

	take(key: string, now: number): BucketDecision {
		const state = this.drained(key, now);
		const limitMs = this.capacity * this.intervalMs;
		if (state.fillMs + this.intervalMs <= limitMs) {
			state.fillMs += this.intervalMs;
			return { admitted: true, level: state.fillMs / this.intervalMs, retryAfterMs: 0 };
		}
		return {
			admitted: false,
			level: state.fillMs / this.intervalMs,
			retryAfterMs: state.fillMs + this.intervalMs - limitMs,
		};
	}

	/** Sets the level as if another client of the same account had just sent that many requests. */
	fill(key: string, level: number, now: number): number {
		const clamped = Math.max(0, Math.min(this.capacity, level));
		this.buckets.set(key, { fillMs: Math.round(clamped * this.intervalMs), updatedAt: now });
		return clamped;
	}

	level(key: string, now: number): number {
		return this.drained(key, now).fillMs / this.intervalMs;
	}

	clear(): void {
		this.buckets.clear();
	}
}
