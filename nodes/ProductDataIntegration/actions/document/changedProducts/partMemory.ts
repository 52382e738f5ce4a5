import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { mapWithPauses } from '../../../../shared/pauses';
import { edition, type ProductMemory } from '../../../../shared/ports';
import { cleanServiceText, getServiceCredentials, holderOf } from '../../../../shared/transport';
import { digest, type ProductEntry, type Recalled } from './memory';

/**
 * Only Changed Products when each run holds part of the catalogue (a page of a shop, a delta
 * feed's run): each product is remembered on its own, in the account's memory per product (the
 * edition's productMemory: the Redis of queue mode, or the one the credential names), as
 * - confirmed: a digest of its content as a session that finished without errors carried it, or
 * - failed: a session that carried it finished with errors (it is sent again).
 * Both the key and the value are digests under the holder's key (see the transport's holderKey):
 * only the holder of the password can tell what they stand for. A run looks up its own products
 * only, and writes only those whose session finished, so it costs time in its own products.
 * Products of other runs stay as they are: a run never forgets what it does not hold.
 */

export const FAILED = 'f';

/**
 * How long a run holds the products it sends against other runs of the node: a run that ends
 * without letting go of them (its process died) holds them back no longer; one that takes longer
 * writes nothing of what it no longer holds, and those products go again in a later run.
 */
export const CLAIM_MS = 3 * 3600 * 1000;

/** 128 bits: no two products of a memory at its bound share a key in any likelihood that matters. */
export function productKey(entry: ProductEntry): string {
	return digest(entry.destination, entry.product).slice(0, 32);
}

export function confirmedValue(entry: ProductEntry): string {
	return `c${digest(entry.destination, entry.product, entry.content).slice(0, 32)}`;
}

/** Why the memory could not be asked, in its own words (Redis's answer, a timeout). */
export function memoryUnavailable(context: IExecuteFunctions, error: unknown): NodeOperationError {
	const reason = error instanceof Error ? error.message : String(error);
	return new NodeOperationError(
		context.getNode(),
		`Only Changed Products could not ask Redis for what the service confirmed: ${reason}`,
		{
			itemIndex: 0,
			description:
				'Nothing was sent. Run it again once Redis answers (the Redis of queue mode, or the one Rate Limit Sharing names in the credential).',
		},
	);
}

/**
 * Where the account keeps the memory per product of this node (or, named, of every node naming it
 * with the same password), or a clear error before any request.
 */
export async function productMemoryOf(
	context: IExecuteFunctions,
	memoryName?: string,
): Promise<ProductMemory> {
	const credentials = await getServiceCredentials(context, 0);
	const holder = holderOf(credentials);
	const node = context.getNode();
	const scope =
		memoryName === undefined
			? digest(holder, context.getWorkflow().id ?? '', node.id || node.name)
			: digest(holder, 'named memory', memoryName);
	const memory = edition().productMemory(credentials, holder, scope);
	if (memory) return memory;
	throw new NodeOperationError(
		node,
		'Products in Each Run "Part of the Catalogue" needs a memory that every n8n process shares',
		{
			itemIndex: 0,
			description:
				'Nothing was sent. It keeps each product in Redis: run n8n in queue mode, or set Rate Limit Sharing to Redis in the credential (the full edition only; n8n Cloud has no Redis for community nodes). Without Redis, give the whole catalogue to one run and choose "The Whole Catalogue".',
		},
	);
}

/** What the memory says of each entry. */
export async function recallPart(
	context: IExecuteFunctions,
	memory: ProductMemory,
	entries: ProductEntry[],
): Promise<Recalled[]> {
	const keys = await mapWithPauses(entries, productKey);
	const values = await memory.recall(keys).catch((error: unknown) => {
		throw memoryUnavailable(context, error);
	});
	return await mapWithPauses(entries, (entry, index) => ({
		unchanged: values[index] === confirmedValue(entry),
		failedBefore: values[index] === FAILED,
	}));
}

/** What a run writes once its sessions finished: its confirmed products and its failed ones. */
export async function partEntries(
	confirmed: ProductEntry[],
	failed: ProductEntry[],
): Promise<Array<[string, string]>> {
	return [
		...(await mapWithPauses(confirmed, (entry): [string, string] => [
			productKey(entry),
			confirmedValue(entry),
		])),
		...(await mapWithPauses(failed, (entry): [string, string] => [productKey(entry), FAILED])),
	];
}

/** A product that another run is sending (or, collected, has taken to send) fails its item. */
export function beingSentElsewhere(
	context: IExecuteFunctions,
	product: string,
	itemIndex: number,
): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`The product "${cleanServiceText(product, 100)}" of item ${itemIndex} is being sent by another run of this node`,
		{
			itemIndex,
			description:
				'Nothing was sent for it: two runs sending one product at once could leave the memory taking the older content as confirmed. It goes in a later run once the other has finished.',
		},
	);
}
