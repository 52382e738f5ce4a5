import type { ICheckProcessedOptions, IExecuteFunctions } from 'n8n-workflow';

import { pause } from '../../../../shared/pauses';

/**
 * n8n's deduplication store as the memory uses it (n8n 2.41.1, `packages/cli/src/deduplication`):
 * per workflow and node one row holding a list of md5 hashes; each call reads the row, changes the
 * list and writes it whole, between two awaits without a pause: hashing, a set of the whole list,
 * and for n8n's removal a scan of the whole list for each value removed. So every call here is
 * sliced, with a pause between slices: a call holds the event loop about as long as n8n takes to
 * read and write the list (measured at 250,000 products: up to 0.9 s on a loaded host while every
 * product's check makes it twice as long; at 100,000 under 0.25 s).
 *
 * No maxEntries: n8n would trim the list from its front past it, and a check next to that bound
 * would drop part of what the list held before. The run's own bound keeps the list bounded.
 */
const STORE_OPTIONS: ICheckProcessedOptions = { mode: 'entries' };

/**
 * Values handed to n8n per call: hashing them stays well below a quarter second. Reading and
 * writing the whole list in the same call does not shrink with fewer values (it grows with the
 * list), so smaller slices would only add calls.
 */
const RECORD_SLICE = 10_000;

/** List entries n8n's removal may compare per call (it scans the whole list for each value). */
const REMOVAL_SCAN_BUDGET = 4_000_000;

/** Checks `values` and records those the list did not hold; stops once `lost` is aborted. */
export async function checkAndRecord(
	context: IExecuteFunctions,
	values: string[],
	lost?: AbortSignal,
): Promise<{ found: string[]; added: string[] }> {
	const found: string[] = [];
	const added: string[] = [];
	for (let start = 0; start < values.length; start += RECORD_SLICE) {
		if (start > 0) await pause();
		if (lost?.aborted) break;
		const slice = values.slice(start, start + RECORD_SLICE);
		const check = await context.helpers.checkProcessedAndRecord(slice, 'node', STORE_OPTIONS);
		for (const value of check.processed) found.push(String(value));
		for (const value of check.new) added.push(String(value));
	}
	return { found, added };
}

export async function countEntries(context: IExecuteFunctions): Promise<number> {
	return await context.helpers.getProcessedDataCount('node', STORE_OPTIONS);
}

/**
 * The list becomes `values`: in time linear in their number. Nothing is written once `lost` is
 * aborted, not even the rest of the values (see MEMORY_LEFT_AS_FOUND); a list cut short holds
 * only true confirmations, and what it lacks is sent again.
 */
export async function rewrite(
	context: IExecuteFunctions,
	lost: AbortSignal,
	values: string[],
): Promise<void> {
	if (lost.aborted) return;
	await context.helpers.clearAllProcessedItems('node', STORE_OPTIONS);
	await checkAndRecord(context, values, lost);
}

/**
 * Removes `values` from a list of `entries` entries, in slices whose scans stay within the budget.
 * Its total time grows with values × entries: only for what cannot be written again instead.
 */
export async function removeEntries(
	context: IExecuteFunctions,
	lost: AbortSignal,
	values: string[],
	entries: number,
): Promise<void> {
	const slice = Math.max(1, Math.floor(REMOVAL_SCAN_BUDGET / Math.max(1, entries)));
	for (let start = 0; start < values.length; start += slice) {
		if (start > 0) await pause();
		if (lost.aborted) return;
		await context.helpers.removeProcessed(
			values.slice(start, start + slice),
			'node',
			STORE_OPTIONS,
		);
	}
}
