import { sleep } from 'n8n-workflow';

/**
 * How long a loop may hold the event loop between two pauses: well below a quarter second even on
 * a busy host, while a catalogue of 250,000 products pauses only a few hundred times.
 */
const WORK_BETWEEN_PAUSES_MS = 50;

/** Lets timers, requests and other executions of the process run. */
export async function pause(): Promise<void> {
	await sleep(0);
}

/**
 * For a long loop between two awaits (a catalogue worked through item by item): awaited once per
 * step, it pauses whenever the loop has run for WORK_BETWEEN_PAUSES_MS since the last pause, so
 * n8n keeps answering requests and the other executions keep running.
 */
export function pausesWhenDue(): () => Promise<void> {
	let since = Date.now();
	return async () => {
		if (Date.now() - since < WORK_BETWEEN_PAUSES_MS) return;
		await pause();
		since = Date.now();
	};
}

/** `for (const value of values) each(value, index)` for a long list, pausing when due. */
export async function forEachWithPauses<T>(
	values: Iterable<T>,
	each: (value: T, index: number) => void,
): Promise<void> {
	const pauseWhenDue = pausesWhenDue();
	let index = 0;
	for (const value of values) {
		await pauseWhenDue();
		each(value, index++);
	}
}

/** `list.map(each)` for a long list, pausing when due (see pausesWhenDue). */
export async function mapWithPauses<T, R>(
	list: Iterable<T>,
	each: (value: T, index: number) => R,
): Promise<R[]> {
	const result: R[] = [];
	await forEachWithPauses(list, (value, index) => result.push(each(value, index)));
	return result;
}
