/**
 * Time for the limiters. They import nothing of n8n, so whoever creates them hands them the
 * platform's cancellable sleep: in the nodes, n8n-workflow's `sleep` (n8n's rules for community
 * packages keep Node's own timers out of them).
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Longest single timer: Node fires a timer of 2^31 ms or more after 1 ms instead (with a
 * warning), which turns a long wait into a busy loop. Longer waits are chained.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Waits `ms` with `sleep`, however long, in timers Node can hold; an aborted signal ends it by rejecting. */
export async function waitWith(sleep: Sleep, ms: number, signal?: AbortSignal): Promise<void> {
	let left = ms;
	do {
		if (signal?.aborted) throw new Error('The wait was cancelled');
		const chunk = Math.min(Math.max(0, left), MAX_TIMER_MS);
		await sleep(chunk, signal);
		left -= chunk;
	} while (left > 0);
}

/** A wait for messages: "45 s", "15 min", "24 h", "3 days". */
export function describeWait(ms: number): string {
	const seconds = Math.round(ms / 1000);
	if (seconds < 120) return `${seconds} s`;
	if (seconds < 2 * 3600) return `${Math.round(seconds / 60)} min`;
	if (seconds < 2 * 86_400) return `${Math.round(seconds / 3600)} h`;
	return `${Math.round(seconds / 86_400)} days`;
}
