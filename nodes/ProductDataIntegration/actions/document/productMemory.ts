import { createHash } from 'crypto';
import type { ICheckProcessedOptions, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

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
 * The check at the start of a run records what it did not find; the list is then written again at
 * once with what it did find, so nothing unconfirmed counts as synced if the run dies later (n8n's
 * own removal of values scans the whole list for each one: 2.5 s for 1,000 values in a list of
 * 100,000, 43 s for 50,000 in 150,000; writing the list again takes about a second). When the
 * run's sessions have finished, the list becomes this run's products that are confirmed (unchanged
 * ones included) and those whose session finished with errors: an older content of a changed
 * product, which would otherwise count as synced if the product changed back to it, is dropped, and
 * so is whatever earlier runs remembered that this run does not hold.
 */

/** Products one run may hold: the list then holds at most twice as many values (confirmed and failed). */
export const MAX_PRODUCTS_PER_RUN = 250_000;
const STORE_OPTIONS: ICheckProcessedOptions = {
	mode: 'entries',
	maxEntries: 2 * MAX_PRODUCTS_PER_RUN,
};

/** The node runs of this process using their node's memory now, by workflow and node. */
const nodesInUse = new Set<string>();

/**
 * Runs `run` as the only run of this node (workflow and node) in this process that uses its memory.
 * n8n's store lets concurrent writers overwrite each other, and a run that read another run's check
 * in flight could count as synced a product the other has not yet had confirmed. Other processes
 * (queue mode's workers) are not seen: there the schedule must keep runs apart.
 */
export async function aloneInMemory<T>(
	context: IExecuteFunctions,
	run: () => Promise<T>,
): Promise<T> {
	const key = `${context.getWorkflow().id ?? ''}\n${context.getNode().id}`;
	if (nodesInUse.has(key)) {
		throw new NodeOperationError(
			context.getNode(),
			'Another run of this node is still syncing its changed products',
			{
				description:
					'Runs of one node with Only Changed Products must not overlap: nothing was sent by this one. Run it again when the other has finished (a schedule further apart, or a lower Timeout (Seconds), keeps them apart).',
			},
		);
	}
	nodesInUse.add(key);
	try {
		return await run();
	} finally {
		nodesInUse.delete(key);
	}
}

function digest(...parts: string[]): string {
	return createHash('sha256').update(parts.join('\n')).digest('hex');
}

/** One product of a run as the memory knows it. */
export interface ProductEntry {
	/** Where the product goes: the keyed account digest with the customer node and the route. */
	destination: string;
	product: string;
	/** A digest of what is sent for the product. */
	content: string;
}

/** Where a product goes, as the memory knows it: the account's holder (holderKey), customer node and route. */
export function destinationDigest(
	accountDigest: string,
	customer: string,
	endpoint: string,
): string {
	return digest(accountDigest, customer, endpoint);
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

/**
 * What the memory says about each entry. What the memory held for these products stays; what it
 * held besides them (other products, older contents, other credentials) is forgotten when any of
 * them is not confirmed as it is now.
 */
export async function recallProducts(
	context: IExecuteFunctions,
	entries: ProductEntry[],
): Promise<Recalled[]> {
	const helpers = context.helpers;
	const confirmed = entries.map(confirmedValue);
	const { new: notConfirmed } = await helpers.checkProcessedAndRecord(
		confirmed,
		'node',
		STORE_OPTIONS,
	);
	const notConfirmedSet = new Set(notConfirmed.map(String));
	const unchanged = confirmed.map((value) => !notConfirmedSet.has(value));
	// Whether a session failed matters only for the products to send: only theirs are looked up.
	const failed = entries.map((entry, index) => (unchanged[index] ? undefined : failedValue(entry)));
	const toLookUp = failed.filter((value): value is string => value !== undefined);
	const failedBefore = new Set(
		toLookUp.length > 0
			? (await helpers.checkProcessedAndRecord(toLookUp, 'node', STORE_OPTIONS)).processed.map(
					String,
				)
			: [],
	);
	if (notConfirmed.length > 0) {
		// The checks recorded what they did not find: written again with what they found.
		await helpers.clearAllProcessedItems('node', STORE_OPTIONS);
		const found = [...confirmed.filter((_, index) => unchanged[index]), ...failedBefore];
		if (found.length > 0) await helpers.checkProcessedAndRecord(found, 'node', STORE_OPTIONS);
	}
	return entries.map((_, index) => ({
		unchanged: unchanged[index],
		failedBefore: failed[index] !== undefined && failedBefore.has(failed[index] as string),
	}));
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
