import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'crypto';
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
 * - failed: a session that carried it finished with errors (it is sent again),
 * each followed by its product id sealed under the holder's key, so that a night that counts the
 * products it no longer saw can name them. The key is a digest and the value a digest and a sealed
 * id, under the holder's key (see the transport's holderKey): only the holder of the password can
 * tell what they stand for. A run looks up its own products
 * only, and writes only those whose session finished, so it costs time in its own products.
 * Products of other runs stay as they are: a run never forgets what it does not hold.
 */

const FAILED = 'f';

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

/** A product as a session confirmed it: its memory's value, and the version a workflow keeps. */
export function confirmedValue(entry: ProductEntry): string {
	return `c${digest(entry.destination, entry.product, entry.content).slice(0, 32)}`;
}

/** Product ids as the memory keeps them: sealed (AES-GCM) under a key only the holder can form. */
export interface ProductIds {
	seal(product: string): string;
	/** The product id, or undefined when `sealed` was not sealed under this holder's key. */
	open(sealed: string): string | undefined;
}

const SEAL_IV_BYTES = 12;
const SEAL_TAG_BYTES = 16;

function productIdsOf(holder: string): ProductIds {
	const key = createHash('sha256').update(`product ids\n${holder}`).digest();
	return {
		seal: (product) => {
			const iv = randomBytes(SEAL_IV_BYTES);
			const cipher = createCipheriv('aes-256-gcm', key, iv);
			const sealed = Buffer.concat([cipher.update(product, 'utf8'), cipher.final()]);
			return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
		},
		open: (sealed) => {
			const raw = Buffer.from(sealed, 'base64');
			try {
				const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, SEAL_IV_BYTES));
				decipher.setAuthTag(raw.subarray(SEAL_IV_BYTES, SEAL_IV_BYTES + SEAL_TAG_BYTES));
				const id = decipher.update(raw.subarray(SEAL_IV_BYTES + SEAL_TAG_BYTES));
				return Buffer.concat([id, decipher.final()]).toString('utf8');
			} catch {
				return undefined;
			}
		},
	};
}

/** What the memory keeps of a product its session confirmed. */
export function rememberedValue(entry: ProductEntry, ids: ProductIds): string {
	return `${confirmedValue(entry)} ${ids.seal(entry.product)}`;
}

/** What the memory keeps of a product instead of `remembered` when its session finished with errors. */
export function failedValue(remembered: string): string {
	return `${FAILED} ${remembered.slice(remembered.indexOf(' ') + 1)}`;
}

/** The product id a remembered value names, if it is this holder's. */
export function productIdOf(value: string, ids: ProductIds): string | undefined {
	const at = value.indexOf(' ');
	return at < 0 ? undefined : ids.open(value.slice(at + 1));
}

function contentOf(value: string | undefined): string | undefined {
	return value?.split(' ', 1)[0];
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
): Promise<{ memory: ProductMemory; ids: ProductIds }> {
	const credentials = await getServiceCredentials(context, 0);
	const holder = holderOf(credentials);
	const node = context.getNode();
	const scope =
		memoryName === undefined
			? digest(holder, context.getWorkflow().id ?? '', node.id || node.name)
			: digest(holder, 'named memory', memoryName);
	const memory = edition().productMemory(credentials, holder, scope);
	if (memory) return { memory, ids: productIdsOf(holder) };
	throw new NodeOperationError(
		node,
		'Products in Each Run "Part of the Catalogue" needs a memory that every n8n process shares',
		{
			itemIndex: 0,
			description:
				'Nothing was sent. It keeps each product in Redis: run n8n in queue mode, or set Rate Limit Sharing to Redis in the credential (the full edition only; n8n Cloud has no Redis for community nodes). Without Redis, set Memory Kept In to "The Workflow" and keep each product\'s version in the workflow (e.g. a data table).',
		},
	);
}

/** What the memory says of each entry; `seen` marks them seen in the memory's night (see closeNight). */
export async function recallPart(
	context: IExecuteFunctions,
	memory: ProductMemory,
	entries: ProductEntry[],
	seen: boolean,
): Promise<Recalled[]> {
	const keys = await mapWithPauses(entries, productKey);
	const values = await memory.recall(keys, seen).catch((error: unknown) => {
		throw memoryUnavailable(context, error);
	});
	return await mapWithPauses(entries, (entry, index) => ({
		unchanged: contentOf(values[index]) === confirmedValue(entry),
		failedBefore: contentOf(values[index]) === FAILED,
	}));
}

/** What a run writes once its sessions finished: its confirmed products and its failed ones. */
export async function partEntries(
	confirmed: ProductEntry[],
	failed: ProductEntry[],
	ids: ProductIds,
): Promise<Array<[string, string]>> {
	return [
		...(await mapWithPauses(confirmed, (entry): [string, string] => [
			productKey(entry),
			rememberedValue(entry, ids),
		])),
		...(await mapWithPauses(failed, (entry): [string, string] => [
			productKey(entry),
			failedValue(rememberedValue(entry, ids)),
		])),
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
