import { createHash } from 'crypto';
import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { forEachWithPauses, mapWithPauses } from '../../../../shared/pauses';
import { runAlone } from '../../../../shared/runAlone';
import { getServiceCredentials, holderOf } from '../../../../shared/transport';
import { checkAndRecord, countEntries, removeEntries, rewrite } from './store';

/**
 * Only Changed Products: which product, as it is now, the service has confirmed, kept in n8n's
 * deduplication store (its database: durable across restarts, shared by every process of the
 * instance, in both editions, without Redis; how it is called: store.ts).
 *
 * The memory keeps two kinds of values, both digests under the account's keyed digest, so that
 * only the holder of the password can tell what they stand for:
 * - confirmed(product, content): this content of this product is in a session that finished
 *   without errors;
 * - failed(product): a session that carried the product finished with errors.
 * A run none of whose sessions failed writes a marker instead (NO_FAILED_SESSIONS).
 * With Count Missing Products, a second value beside each: identity(product) beside confirmed,
 * a twin beside failed, and a marker written last that says the list holds them (see
 * identitiesKeptMarker).
 * n8n's store cannot look without recording: the check at the start of a run records every value
 * it did not find, with a marker that tells a later run that a check is under way or was cut short
 * (the process died): that run trusts none of it and sends every product. After an upload the
 * service accepted, the list is written again, in time linear in it: it becomes this run's
 * products that are confirmed (unchanged ones included) and those whose session finished with
 * errors. An older content of a changed product, which would otherwise count as synced if the
 * product changed back to it, is dropped, and so is whatever earlier runs remembered that this run
 * does not hold (after a run of a few sample items, the next run sends all the others). A run that
 * ends otherwise (Validate Only, no upload taken, an error) puts the list back to exactly what it
 * held: written again with what the checks found when that was all it held, or else with what they
 * added removed by n8n's removal, which scans the list for each value (in slices with a pause
 * between them, so slow but never blocking: 1,000 values from a list of 100,000 take about 2.5 s).
 * Every write puts the under-way marker first and the identities' marker last, and a removal goes
 * the other way, so that a write cut short never leaves what a check added looking confirmed, nor
 * claims identities it does not hold.
 */

/** Products one run may hold: the list then holds at most as many values and two markers. */
export const MAX_PRODUCTS_PER_RUN = 250_000;

/**
 * Runs `run` as the only run of this node (workflow and node) that uses its memory, in this process
 * and, in the full edition, in every process of queue mode (see runAlone); null when another run
 * goes on (see overlapRefusal). n8n's store lets concurrent writers overwrite each other, and a run
 * that read another run's check in flight could count as synced a product the other has not yet
 * had confirmed.
 */
export async function aloneInMemory<T>(
	context: IExecuteFunctions,
	run: (lost: AbortSignal) => Promise<T>,
): Promise<T | null> {
	return await runAlone(
		context,
		{
			skipped: 'Only Changed Products: refused, another run of this node is syncing',
		},
		run,
	);
}

/**
 * Why a run leaves the memory as it found it once its hold on the node was lost (its lease in
 * queue mode's Redis ran out): another run may have started meanwhile, and n8n's store lets
 * concurrent writers overwrite each other. What this run sent is not remembered as confirmed, so
 * it goes again; once its check had begun, the list marks that check as under way, and the next
 * run trusts none of it and sends every product.
 */
export const MEMORY_LEFT_AS_FOUND =
	'Not written: this run lost its hold on the node (another run of it may have started meanwhile), so it left the memory as it found it. What it sent is not remembered as confirmed and goes again in the next run.';

/** Why a run that overlapped another sent nothing. */
export function overlapRefusal(context: IExecuteFunctions): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		'Another run of this node is still syncing its changed products',
		{
			description:
				'Runs of one node with Only Changed Products must not overlap: nothing was sent by this one. Run it again when the other has finished (a schedule further apart, or a lower Timeout (Seconds), keeps them apart).',
		},
	);
}

/** The memory's digest of a product's parts (its destination, id, content). */
export function digest(...parts: string[]): string {
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

/** A product confirmed as some content: a look-up tells it from a new one without recording. */
function identityValue(entry: ProductEntry): string {
	return `i:${digest(entry.destination, entry.product)}`;
}

/** Beside failed(product), so that each remembered product holds two values; never looked up. */
function failedTwinValue(entry: ProductEntry): string {
	return `g:${digest(entry.destination, entry.product)}`;
}

/**
 * Written last by a rewrite that keeps identities: a list that holds it holds, besides it, exactly
 * two values per remembered product (confirmed and identity, or failed and its twin), and perhaps
 * the marker that no session failed, so their number is the count's arithmetic. Keyed by the
 * credential's holder: under another password the list's identities are not this run's, and
 * nothing is counted rather than every product.
 */
export async function identitiesKeptMarker(context: IExecuteFunctions): Promise<string> {
	return `k:${digest(holderOf(await getServiceCredentials(context, 0)), 'identities kept')}`;
}

/** The products the last run remembered that this run does not hold, or why they are not counted. */
export type Missing = { missing: number } | { missing: null; missingNote: string };

const NOT_COUNTED = {
	noIdentities:
		'Not counted: the last run did not keep its products (Count Missing Products was off, the credential was another, or there was no run before). This run keeps them once the service takes its upload.',
	untrusted:
		"Not counted: the last run's check was cut short, so nothing the memory holds is trusted and every product is sent.",
	lost: 'Not counted: this run lost its hold on the node before its check finished.',
	sendAll: 'Not counted: Send All Products does not consult the memory.',
};

/** What the summary says of missing products when Send All Products leaves the memory unread. */
export const MISSING_WITH_SEND_ALL: Missing = { missing: null, missingNote: NOT_COUNTED.sendAll };

/** What the memory says about one product at the start of a run. */
export interface Recalled {
	unchanged: boolean;
	/** A session that carried it finished with errors (it is sent again). */
	failedBefore: boolean;
}

/** What Send All Products makes of every product: as if the memory held none of them. */
export async function nothingRecalled(entries: ProductEntry[]): Promise<Recalled[]> {
	return await mapWithPauses(entries, () => ({ unchanged: false, failedBefore: false }));
}

/** Recorded by the first check of a run and gone once the memory is written or put back. */
const CHECK_UNDER_WAY = 'check under way';

/**
 * Written by a run none of whose products' sessions failed: the list holds no failed value, so the
 * next run looks none up. Otherwise a night where every product changed would record a failed value
 * for each of them beside its new content, and n8n's every call would read and write a list three
 * times the catalogue instead of twice.
 */
const NO_FAILED_SESSIONS = 'no failed sessions';

/** What the memory said at the start of a run, and how to put it back as it was. */
export interface Recall {
	recalled: Recalled[];
	/** Only when identities were asked for. */
	missing?: Missing;
	/** Puts the list back as it was found: for a run that does not write it again. */
	putBack(): Promise<void>;
}

/**
 * What the memory says about each entry, and with `identitiesKept` (see identitiesKeptMarker) how
 * many products the last run remembered that `entries` do not hold: the list's products (its count
 * less the markers, halved) less those among the entries: the unchanged ones, those whose identity
 * the list holds and those whose session failed. Of the products to send, the identities are
 * looked up first: a changed product's is found and not recorded, so a night where every product
 * changed makes the list no longer than without identities; only the others' failed values follow,
 * unless the list holds the marker that no session failed.
 * What the checks recorded stays in the list, beside the marker, until the run writes the list
 * again or puts it back; if the checks fail, it is put back at once.
 */
export async function recallProducts(
	context: IExecuteFunctions,
	entries: ProductEntry[],
	lost: AbortSignal,
	identitiesKept?: string,
): Promise<Recall> {
	const countBefore = await countEntries(context);
	const confirmed = await mapWithPauses(entries, confirmedValue);
	const found: string[] = [];
	const added: string[] = [];
	const putBack = async () => {
		if (added.length === 0) return;
		// The list held nothing but what the checks found: written again with that.
		if (countBefore === found.length)
			await rewrite(context, lost, inWriteOrder(found, identitiesKept));
		else
			await removeEntries(
				context,
				lost,
				inWriteOrder(added, identitiesKept).reverse(),
				countBefore + added.length,
			);
		added.length = 0;
	};
	let answered = false;
	try {
		const markers = [CHECK_UNDER_WAY, NO_FAILED_SESSIONS];
		if (identitiesKept !== undefined) markers.push(identitiesKept);
		const check = await checkAndRecord(context, [...markers, ...confirmed], lost);
		await keep(check, found, added);
		const before = await setOf(check.found);
		const trusted = !before.has(CHECK_UNDER_WAY);
		// No failed value to look up where the last run wrote that none failed, or where the list
		// held nothing but what the check found (a first run's empty list).
		const noFailedValues = before.has(NO_FAILED_SESSIONS) || countBefore === check.found.length;
		const countable = identitiesKept !== undefined && trusted && before.has(identitiesKept);
		const unchanged = await mapWithPauses(confirmed, (value) => trusted && before.has(value));
		const toSend = (index: number) => trusted && !unchanged[index];
		const identities = await mapWithPauses(entries, (entry, index) =>
			countable && toSend(index) ? identityValue(entry) : undefined,
		);
		const confirmedBefore = await lookUp(context, identities, found, added, lost);
		const isIn = (values: Set<string>, value: string | undefined) =>
			value !== undefined && values.has(value);
		// Whether a session failed matters only for the products to send: only theirs are looked up.
		const failed = await mapWithPauses(entries, (entry, index) =>
			!noFailedValues && toSend(index) && !isIn(confirmedBefore, identities[index])
				? failedValue(entry)
				: undefined,
		);
		const failedBefore = await lookUp(context, failed, found, added, lost);
		const recalled = await mapWithPauses(entries, (_, index) => ({
			unchanged: unchanged[index],
			failedBefore: isIn(failedBefore, failed[index]),
		}));
		answered = true;
		if (identitiesKept === undefined) return { recalled, putBack };
		let missing: Missing;
		if (lost.aborted) missing = { missing: null, missingNote: NOT_COUNTED.lost };
		else if (!trusted) missing = { missing: null, missingNote: NOT_COUNTED.untrusted };
		else if (!countable) missing = { missing: null, missingNote: NOT_COUNTED.noIdentities };
		else {
			const markersBefore = before.has(NO_FAILED_SESSIONS) ? 2 : 1;
			const remembered = (countBefore - markersBefore) / 2;
			const stillHere = unchanged.filter(Boolean).length + confirmedBefore.size + failedBefore.size;
			missing = { missing: remembered - stillHere };
		}
		return { recalled, putBack, missing };
	} finally {
		if (!answered) await putBack();
	}
}

/**
 * `values` in the order a write of them takes, so that one cut short never claims more than the
 * list holds: the under-way marker first, the identities' marker last. A removal goes the other way.
 */
function inWriteOrder(values: string[], identitiesKept: string | undefined): string[] {
	const isMarker = (value: string) => value === CHECK_UNDER_WAY || value === identitiesKept;
	return [
		...values.filter((value) => value === CHECK_UNDER_WAY),
		...values.filter((value) => !isMarker(value)),
		...values.filter((value) => value === identitiesKept),
	];
}

/** Adds what a check found and added to the run's lists (one by one: they may be long). */
async function keep(
	check: { found: string[]; added: string[] },
	found: string[],
	added: string[],
): Promise<void> {
	await forEachWithPauses(check.found, (value) => found.push(value));
	await forEachWithPauses(check.added, (value) => added.push(value));
}

/** `new Set(values)` for a list of a whole catalogue, pausing when due. */
async function setOf(values: string[]): Promise<Set<string>> {
	const set = new Set<string>();
	await forEachWithPauses(values, (value) => set.add(value));
	return set;
}

/** The values of `values` the list holds; found and added are kept. */
async function lookUp(
	context: IExecuteFunctions,
	values: Array<string | undefined>,
	found: string[],
	added: string[],
	lost: AbortSignal,
): Promise<Set<string>> {
	const toLookUp = values.filter((value): value is string => value !== undefined);
	if (toLookUp.length === 0) return new Set();
	const check = await checkAndRecord(context, toLookUp, lost);
	await keep(check, found, added);
	return await setOf(check.found);
}

/**
 * After the run's sessions finished, once the service has answered this credential: the memory
 * becomes this run's products that are confirmed (unchanged ones included) and those whose session
 * finished with errors, or else the marker that none did; with `identitiesKept`, each one's second
 * value and then the marker.
 */
export async function rememberRun(
	context: IExecuteFunctions,
	confirmed: ProductEntry[],
	failed: ProductEntry[],
	lost: AbortSignal,
	identitiesKept?: string,
): Promise<void> {
	const identities =
		identitiesKept === undefined
			? []
			: [
					...(await mapWithPauses(confirmed, identityValue)),
					...(await mapWithPauses(failed, failedTwinValue)),
					identitiesKept,
				];
	await rewrite(context, lost, [
		...(failed.length === 0 ? [NO_FAILED_SESSIONS] : []),
		...(await mapWithPauses(confirmed, confirmedValue)),
		...(await mapWithPauses(failed, failedValue)),
		...identities,
	]);
}
