import { createHash, createHmac } from 'crypto';
import type { ICheckProcessedOptions, IExecuteFunctions } from 'n8n-workflow';

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
 * The check at the start of a run takes back at once what it recorded, so the memory is as it was
 * and nothing unconfirmed counts as synced if the run dies. Only after the service has answered
 * this credential's uploads (so its password is proven) and their sessions finished is the list
 * written again: the unchanged products, the confirmed ones and the failed ones of this run. That
 * drops an older content of a changed product (which would otherwise count as synced if the
 * product changed back to it) and whatever earlier runs remembered that this run does not hold.
 */

/** Products one run may hold: the list then holds at most twice as many values (confirmed and failed). */
export const MAX_PRODUCTS_PER_RUN = 250_000;
const STORE_OPTIONS: ICheckProcessedOptions = { mode: 'entries', maxEntries: 2 * MAX_PRODUCTS_PER_RUN };

/** What scopes the memory: the account as only its password's holder can name it, and where it sends. */
export interface ProductMemoryScope {
	origin: string;
	username: string;
	password: string;
	customer: string;
	endpoint: string;
}

/**
 * A keyed digest of the account (HMAC with the password as key over the Base URL's origin, the
 * exact username and the customer node): a credential with another password, or another username
 * (case counts), computes another digest and so sees none of this account's memory.
 */
export function keyedAccountDigest(scope: ProductMemoryScope): string {
	return createHmac('sha256', scope.password)
		.update(['product-memory', scope.origin, scope.username, scope.customer, scope.endpoint].join('\n'))
		.digest('hex');
}

function digest(...parts: string[]): string {
	return createHash('sha256').update(parts.join('\n')).digest('hex');
}

/** One product of a run as the memory knows it. */
export interface ProductEntry {
	/** The keyed account digest of the customer node and route the product goes to. */
	account: string;
	product: string;
	/** A digest of what is sent for the product. */
	content: string;
}

export function confirmedValue(entry: ProductEntry): string {
	return `c:${digest(entry.account, entry.product, entry.content)}`;
}

function failedValue(entry: ProductEntry): string {
	return `f:${digest(entry.account, entry.product)}`;
}

/** What the memory says about one product at the start of a run. */
export interface Recalled {
	unchanged: boolean;
	/** A session that carried it finished with errors (it is sent again). */
	failedBefore: boolean;
}

/** What the memory says about each entry; the memory is left as it was. */
export async function recallProducts(context: IExecuteFunctions, entries: ProductEntry[]): Promise<Recalled[]> {
	const helpers = context.helpers;
	const confirmed = entries.map(confirmedValue);
	const failed = entries.map(failedValue);
	const before = await helpers.getProcessedDataCount('node', STORE_OPTIONS);
	const { new: absent } = await helpers.checkProcessedAndRecord([...confirmed, ...failed], 'node', STORE_OPTIONS);
	// Checking recorded what was absent: taken back at once, exactly.
	if (before === 0) await helpers.clearAllProcessedItems('node', STORE_OPTIONS);
	else if (absent.length > 0) await helpers.removeProcessed(absent, 'node', STORE_OPTIONS);
	const absentSet = new Set(absent.map(String));
	return entries.map((_, index) => ({
		unchanged: !absentSet.has(confirmed[index]),
		failedBefore: !absentSet.has(failed[index]),
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
	if (values.length > 0) await context.helpers.checkProcessedAndRecord(values, 'node', STORE_OPTIONS);
}
