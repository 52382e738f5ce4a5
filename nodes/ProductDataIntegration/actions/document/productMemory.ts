import { createHash } from 'crypto';
import type { ICheckProcessedOptions, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { runAlone } from '../../../shared/runAlone';

/**
 * Only Changed Products: which product, as it is now, the service has confirmed, kept in n8n's
 * deduplication store (its database: durable across restarts, shared by every process of the
 * instance, in both editions, without Redis).
 *
 * That store holds, per workflow and node, one list of hashed values; each call reads the list and
 * writes it whole, and checking a value records it. The memory keeps two kinds of values, both
 * digests under the account's keyed digest, so that only the holder of the password can tell what
 * they stand for:
 * - confirmed(product, content): this content of this product is in a session that finished
 *   without errors;
 * - failed(product): a session that carried the product finished with errors.
 * n8n's store cannot look without recording: the check at the start of a run records every value
 * it did not find. So the memory is put back at once, whatever happens, to exactly what it held:
 * what the checks added is removed (n8n's own removal scans the whole list for each value: 2.5 s
 * for 1,000 values in a list of 100,000, 43 s for 50,000 in 150,000), or, when the list held
 * nothing but what they found, it is written again with that (about a second). A marker recorded
 * by the first check and removed with the rest tells a later run that a check was cut short (the
 * process died) before the memory was put back: that run trusts none of it and sends every
 * product. Only after an upload the service accepted does the list change: it becomes this run's
 * products that are confirmed (unchanged ones included) and those whose session finished with
 * errors. An older content of a changed product, which would otherwise count as synced if the
 * product changed back to it, is dropped, and so is whatever earlier runs remembered that this
 * run does not hold (after a run of a few sample items, the next run sends all the others).
 */

/**
 * Products one run may hold: the list then holds at most twice as many values (confirmed and
 * failed), and the marker of a check under way.
 */
export const MAX_PRODUCTS_PER_RUN = 250_000;
const STORE_OPTIONS: ICheckProcessedOptions = {
	mode: 'entries',
	maxEntries: 2 * MAX_PRODUCTS_PER_RUN + 1,
};

/**
 * Runs `run` as the only run of this node (workflow and node) that uses its memory, in this process
 * and, in the full edition, in every process of queue mode (see runAlone). n8n's store lets
 * concurrent writers overwrite each other, and a run that read another run's check in flight could
 * count as synced a product the other has not yet had confirmed.
 */
export async function aloneInMemory<T>(
	context: IExecuteFunctions,
	run: () => Promise<T>,
): Promise<T> {
	return await runAlone(
		context,
		{
			whenBusy: 'refuse',
			refusal: () =>
				new NodeOperationError(
					context.getNode(),
					'Another run of this node is still syncing its changed products',
					{
						description:
							'Runs of one node with Only Changed Products must not overlap: nothing was sent by this one. Run it again when the other has finished (a schedule further apart, or a lower Timeout (Seconds), keeps them apart).',
					},
				),
		},
		run,
	);
}

function digest(...parts: string[]): string {
	return createHash('sha256').update(parts.join('\n')).digest('hex');
}

/** One product of a run as the memory knows it. */
export interface ProductEntry {
	/** Where the product goes: customerScope of its customer node and the route. */
	destination: string;
	product: string;
	/** A digest of what is sent for the product. */
	content: string;
}

function confirmedValue(entry: ProductEntry): string {
	return `c:${digest(entry.destination, entry.product, entry.content)}`;
}

function failedValue(entry: ProductEntry): string {
	return `f:${digest(entry.destination, entry.product)}`;
}

/** What the memory says about one product at the start of a run. */
export interface Recalled {
	unchanged: boolean;
	/** A session that carried it finished with errors (it is sent again). */
	failedBefore: boolean;
}

/** Recorded by the first check of a run and removed when the memory is put back (see above). */
const CHECK_UNDER_WAY = 'check under way';

/** What the memory says about each entry; the memory is left as it was found. */
export async function recallProducts(
	context: IExecuteFunctions,
	entries: ProductEntry[],
): Promise<Recalled[]> {
	const helpers = context.helpers;
	const countBefore = await helpers.getProcessedDataCount('node', STORE_OPTIONS);
	const confirmed = entries.map(confirmedValue);
	const check = await helpers.checkProcessedAndRecord(
		[CHECK_UNDER_WAY, ...confirmed],
		'node',
		STORE_OPTIONS,
	);
	let found = check.processed.map(String);
	let added = check.new.map(String);
	try {
		const confirmedBefore = new Set(found);
		const trusted = !confirmedBefore.has(CHECK_UNDER_WAY);
		const unchanged = confirmed.map((value) => trusted && confirmedBefore.has(value));
		// Whether a session failed matters only for the products to send: only theirs are looked up.
		const failed = entries.map((entry, index) =>
			trusted && !unchanged[index] ? failedValue(entry) : undefined,
		);
		const toLookUp = failed.filter((value): value is string => value !== undefined);
		let failedBefore = new Set<string>();
		if (toLookUp.length > 0) {
			const lookUp = await helpers.checkProcessedAndRecord(toLookUp, 'node', STORE_OPTIONS);
			added = added.concat(lookUp.new.map(String));
			found = found.concat(lookUp.processed.map(String));
			failedBefore = new Set(lookUp.processed.map(String));
		}
		return entries.map((_, index) => ({
			unchanged: unchanged[index],
			failedBefore: failed[index] !== undefined && failedBefore.has(failed[index] as string),
		}));
	} finally {
		await putBack(context, countBefore, found, added);
	}
}

/** Puts the list back as it was before the checks of a run found `found` and added `added`. */
async function putBack(
	context: IExecuteFunctions,
	countBefore: number,
	found: string[],
	added: string[],
): Promise<void> {
	const helpers = context.helpers;
	if (added.length === 0) return;
	if (countBefore === found.length) {
		// The list held nothing but what the checks found: written again with that, at once.
		await helpers.clearAllProcessedItems('node', STORE_OPTIONS);
		if (found.length > 0) await helpers.checkProcessedAndRecord(found, 'node', STORE_OPTIONS);
	} else {
		await helpers.removeProcessed(added, 'node', STORE_OPTIONS);
	}
}

/**
 * After the run's sessions finished, once the service has answered this credential: the memory
 * becomes this run's products that are confirmed (unchanged ones included) and those whose session
 * finished with errors.
 */
export async function rememberRun(
	context: IExecuteFunctions,
	confirmed: ProductEntry[],
	failed: ProductEntry[],
): Promise<void> {
	await context.helpers.clearAllProcessedItems('node', STORE_OPTIONS);
	const values = [...confirmed.map(confirmedValue), ...failed.map(failedValue)];
	if (values.length > 0)
		await context.helpers.checkProcessedAndRecord(values, 'node', STORE_OPTIONS);
}
