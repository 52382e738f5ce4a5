import type { LimiterClock } from '../../nodes/shared/throttle';

/** Manual clock: time moves only through advance(), timers fire in due order. */
export class FakeClock implements LimiterClock {
	private current = 1_000_000;

	private sequence = 0;

	private readonly timers = new Map<number, { at: number; callback: () => void }>();

	now(): number {
		return this.current;
	}

	setTimeout(callback: () => void, ms: number): unknown {
		const id = ++this.sequence;
		this.timers.set(id, { at: this.current + Math.max(0, ms), callback });
		return id;
	}

	clearTimeout(handle: unknown): void {
		this.timers.delete(handle as number);
	}

	get pendingTimers(): number {
		return this.timers.size;
	}

	/** Moves time forward, firing each due timer at its own time; lets promises settle between. */
	async advance(ms: number): Promise<void> {
		const end = this.current + ms;
		for (;;) {
			await flush();
			let next: [number, { at: number; callback: () => void }] | undefined;
			for (const entry of this.timers) {
				if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
			}
			if (!next) break;
			this.timers.delete(next[0]);
			this.current = Math.max(this.current, next[1].at);
			next[1].callback();
		}
		this.current = end;
		await flush();
	}
}

/** Lets the promise callbacks that are due run. */
export async function flush(): Promise<void> {
	for (let i = 0; i < 5; i++) await Promise.resolve();
}

/**
 * Fakes Date alone, at `now`: timers keep real time, and so do the servers, clients and timeouts
 * of a test that waits for real I/O. Undo it with jest.useRealTimers().
 */
export function fakeDateOnly(now: number): void {
	jest.useFakeTimers({
		doNotFake: [
			'hrtime',
			'nextTick',
			'performance',
			'queueMicrotask',
			'requestAnimationFrame',
			'cancelAnimationFrame',
			'requestIdleCallback',
			'cancelIdleCallback',
			'setImmediate',
			'clearImmediate',
			'setInterval',
			'clearInterval',
			'setTimeout',
			'clearTimeout',
		],
		now,
	});
}
