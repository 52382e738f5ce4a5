import { sleep } from 'n8n-workflow';

/**
 * Longest single timer: Node fires a timer of 2^31 ms or more after 1 ms instead (with a
 * warning), which turns a long wait into a busy loop. Longer waits are chained.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Waits `ms`, however long, in timers Node can hold; an aborted signal ends it by rejecting. */
export async function wait(ms: number, signal?: AbortSignal): Promise<void> {
	let left = ms;
	do {
		if (signal?.aborted) throw new Error('The wait was cancelled');
		const chunk = Math.min(Math.max(0, left), MAX_TIMER_MS);
		await sleep(chunk, signal);
		left -= chunk;
	} while (left > 0);
}
