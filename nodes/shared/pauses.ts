import { sleep } from 'n8n-workflow';

/**
 * How long a loop may hold the event loop between two pauses: well below a quarter second even on
 * a busy host, while a catalogue of 250,000 products pauses only a few hundred times.
 */
const WORK_BETWEEN_PAUSES_MS = 50;

/** When a pause last let the event loop turn. */
let lastPause = Date.now();

/** Lets timers, requests and other executions of the process run. */
export async function pause(): Promise<void> {
	await sleep(0);
	lastPause = Date.now();
}

/**
 * For a long loop between two awaits (a catalogue worked through item by item): awaited once per
 * step, it pauses whenever WORK_BETWEEN_PAUSES_MS have passed since the last pause, so n8n keeps
 * answering requests and the other executions keep running. The time counts from the last pause
 * of any loop, not of this one: a loop that follows another, and the work between them, hold the
 * event loop in the same stretch.
 */
export async function pauseWhenDue(): Promise<void> {
	if (Date.now() - lastPause < WORK_BETWEEN_PAUSES_MS) return;
	await pause();
}

/** `for (const value of values) each(value, index)` for a long list, pausing when due. */
export async function forEachWithPauses<T>(
	values: Iterable<T>,
	each: (value: T, index: number) => void,
): Promise<void> {
	let index = 0;
	for (const value of values) {
		await pauseWhenDue();
		each(value, index++);
	}
}

/** `list.map(each)` for a long list, pausing when due (see pauseWhenDue). */
export async function mapWithPauses<T, R>(
	list: Iterable<T>,
	each: (value: T, index: number) => R,
): Promise<R[]> {
	const result: R[] = [];
	await forEachWithPauses(list, (value, index) => result.push(each(value, index)));
	return result;
}
