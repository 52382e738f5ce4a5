import { createHash } from 'crypto';
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import type { ProductMemory } from '../ports';
import type { RedisConnection, SharedBucketStore } from './bucketStore';
import { storeFor } from './sharedRegistry';
import {
	CLAIM,
	COLLECT,
	FORGET_UNSEEN,
	readClaim,
	readCollect,
	readCount,
	readNight,
	readScanStep,
	readTake,
	readValues,
	RECALL,
	RECALL_SEEN,
	REMEMBER,
	TAKE,
} from './productMemoryScripts';
import { sharingFor } from './sharing';

/*
 * The memory per product of Only Changed Products in Redis (full edition only), on the connection
 * the account's rate limit uses in the same Redis (see ./sharedRegistry.ts): one hash per node of a
 * password holder (product key -> value), beside it a hash of the claims of the runs that are
 * sending products (product key -> run and until when), and per holder an index of its memories
 * for the holder's bound. Products collected to be sent together (see ProductMemory.collect) wait
 * in a hash of their own (product key -> staged value) with a list of their keys in the order they
 * came and how their documents are built; their claims name the collection instead of a run. A
 * memory's nights: its number, and a hash of the night each product was last seen in.
 */

/** Products per node, and of all of a holder's nodes together: a run that would pass either is refused. */
export interface ProductMemoryBounds {
	products: number;
	productsPerHolder: number;
}

const PRODUCT_BOUNDS: ProductMemoryBounds = {
	products: 2_000_000,
	productsPerHolder: 10_000_000,
};

/**
 * How long a memory outlives its last write: a catalogue synced at least once a year keeps it, one
 * that stopped leaves nothing behind.
 */
const LIFETIME_MS = 400 * 24 * 3600 * 1000;

const KEY_PREFIX = 'n8n-nodes-product-data-integration:products:';
/** Named by a digest of the holder's key, which is never stored as it is. */
const HOLDER_PREFIX = 'n8n-nodes-product-data-integration:product-holder:';

/** Keys per script: each call holds Redis for about a millisecond. */
const KEYS_PER_COMMAND = 1000;
/**
 * How long a document being taken keeps its size from other takers after its last slice: its
 * slices follow each other at once, so a run that stopped between them (a process gone) holds its
 * products back a minute at most.
 */
const TAKING_MS = 60_000;

function slices<T>(values: T[], size: number): T[][] {
	const sliced: T[][] = [];
	for (let start = 0; start < values.length; start += size)
		sliced.push(values.slice(start, start + size));
	return sliced;
}

export class RedisProductMemory implements ProductMemory {
	readonly bound: number;

	private readonly keys: string[];

	private readonly collectionKeys: string[];

	private readonly takingKey: string;

	private readonly nightKeys: string[];

	private readonly store: SharedBucketStore;

	private readonly bounds: ProductMemoryBounds;

	/** `holder`: the password holder (see the transport's holderKey); `scope` names its node. */
	constructor(
		connection: RedisConnection,
		holder: string,
		private readonly scope: string,
		bounds: Partial<ProductMemoryBounds> = {},
		private readonly now: () => number = Date.now,
	) {
		this.store = storeFor(connection);
		this.bounds = { ...PRODUCT_BOUNDS, ...bounds };
		this.bound = this.bounds.products;
		const holderKeys = `${HOLDER_PREFIX}${createHash('sha256').update(holder).digest('hex')}`;
		this.keys = [
			`${KEY_PREFIX}${scope}`,
			`${KEY_PREFIX}${scope}:claims`,
			`${holderKeys}:memories`,
			`${holderKeys}:memory-products`,
		];
		this.nightKeys = [`${KEY_PREFIX}${scope}:seen`, `${KEY_PREFIX}${scope}:night`];
		this.collectionKeys = [
			`${KEY_PREFIX}${scope}:claims`,
			`${KEY_PREFIX}${scope}:collected`,
			`${KEY_PREFIX}${scope}:collected-order`,
			`${KEY_PREFIX}${scope}:collected-documents`,
		];
		this.takingKey = `${KEY_PREFIX}${scope}:collected-taking`;
	}

	async recall(keys: string[], seen = false): Promise<Array<string | undefined>> {
		const values: Array<string | undefined> = [];
		for (const slice of slices(keys, KEYS_PER_COMMAND)) {
			const read = (reply: unknown) => readValues(reply, slice.length);
			const found = seen
				? await this.store.run(
						RECALL_SEEN,
						[this.keys[0], ...this.nightKeys],
						[String(LIFETIME_MS), ...slice],
						read,
					)
				: await this.store.run(RECALL, this.keys.slice(0, 1), slice, read);
			values.push(...found);
		}
		return values;
	}

	async closeNight(listed: number): Promise<{ forgotten: number; values: string[] }> {
		const [seenKey, nightKey] = this.nightKeys;
		const night = await this.store.run(
			`return redis.call('GET', KEYS[1])`,
			[nightKey],
			[],
			readNight,
		);
		const keys = [this.keys[0], seenKey, this.keys[3]];
		// A product is deleted by the step that finds it, so no later step of the scan finds it again.
		let forgotten = 0;
		const values: string[] = [];
		let cursor = '0';
		do {
			const args = [night, cursor, String(KEYS_PER_COMMAND), this.scope];
			const step = await this.store.run(FORGET_UNSEEN, keys, args, readScanStep);
			for (let index = 0; index < step.pairs.length; index += 2) {
				forgotten++;
				if (values.length < listed) values.push(step.pairs[index + 1]);
			}
			cursor = step.cursor;
		} while (cursor !== '0');
		const next = `redis.call('INCR', KEYS[1]) redis.call('PEXPIRE', KEYS[1], ARGV[1]) return 1`;
		await this.store.run(next, [nightKey], [String(LIFETIME_MS)], readCount);
		return { forgotten, values };
	}

	async claim(
		keys: string[],
		runId: string,
		untilMs: number,
	): Promise<{ taken: Set<string> } | 'full'> {
		const taken = new Set<string>();
		const claimed: string[] = [];
		for (const slice of slices(keys, KEYS_PER_COMMAND)) {
			const head = [
				this.now(),
				runId,
				untilMs,
				this.bounds.products,
				this.bounds.productsPerHolder,
			];
			const answer = await this.store.run(
				CLAIM,
				this.keys,
				[...head.map(String), this.scope, ...slice],
				readClaim,
			);
			if (answer === 'full') {
				// Nothing of a refused run stays claimed.
				await this.remember([], runId, claimed);
				return 'full';
			}
			for (const key of answer) taken.add(key);
			for (const key of slice) if (!taken.has(key)) claimed.push(key);
		}
		return { taken };
	}

	async remember(
		entries: Array<[key: string, value: string]>,
		runId: string,
		released: string[],
	): Promise<number> {
		let written = 0;
		const head = () => [String(this.now()), runId, String(LIFETIME_MS), this.scope];
		for (const slice of slices(entries, KEYS_PER_COMMAND)) {
			const args = [...head(), String(slice.length), ...slice.flat()];
			written += await this.store.run(REMEMBER, this.keys, args, readCount);
		}
		for (const slice of slices(released, KEYS_PER_COMMAND))
			await this.store.run(REMEMBER, this.keys, [...head(), '0', ...slice], readCount);
		return written;
	}

	async collect(
		entries: Array<[key: string, staged: string]>,
		runId: string,
		documents: string,
		untilMs: number,
	): Promise<{ notCollected: Set<string> } | { otherDocuments: string }> {
		const notCollected = new Set<string>();
		for (const slice of slices(entries, KEYS_PER_COMMAND)) {
			const args = [String(this.now()), runId, String(untilMs), documents, ...slice.flat()];
			const answer = await this.store.run(COLLECT, this.collectionKeys, args, readCollect);
			if ('otherDocuments' in answer) return answer;
			for (const key of answer.notCollected) notCollected.add(key);
		}
		return { notCollected };
	}

	async take(
		runId: string,
		untilMs: number,
		least: number,
		most: number,
	): Promise<{ documents: string; products: Array<[key: string, staged: string]> } | undefined> {
		// A script per slice: one over a whole document of 100,000 products outlasts the command's
		// deadline, and holds Redis and then this process's event loop for its answer. The first
		// slice sets the document's size (see TAKE), the rest take what is left of it.
		let taken: { documents: string; products: Array<[key: string, staged: string]> } | undefined;
		for (;;) {
			const now = this.now();
			const want = most - (taken?.products.length ?? 0);
			const args = [
				now,
				runId,
				untilMs,
				taken ? 1 : least,
				want,
				KEYS_PER_COMMAND,
				now + TAKING_MS,
			];
			const answer = await this.store.run(
				TAKE,
				[...this.collectionKeys, this.takingKey],
				args.map(String),
				readTake,
			);
			if (answer === 'none') break;
			if (taken) taken.products.push(...answer.products);
			else taken = { documents: answer.documents, products: answer.products };
			if (answer.left === 0) break;
		}
		return taken;
	}
}

/** The memory per product of a node in the Redis the account shares its rate limit through, where it has one. */
export function productMemoryInRedis(
	credentials: ICredentialDataDecryptedObject,
	holder: string,
	scope: string,
): ProductMemory | undefined {
	const { connection } = sharingFor(credentials);
	return connection ? new RedisProductMemory(connection, holder, scope) : undefined;
}
