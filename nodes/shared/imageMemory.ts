import { createHash } from 'crypto';
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import type { RedisConnection } from './throttle';
import type { SharedBucketStore } from './throttle/redisBucket';
import { storeFor } from './throttle/registry';
import { accountKey, effectiveCustomer, sharingFor, type CustomerOverride } from './transport';

/**
 * The images an account's customer node already has, by md5: what the image upload learnt from the
 * service (an upload's answer, a lookup), so that an image it knows costs no request. The service
 * never changes the hashcode of an image it has, but it may remove images: an entry is trusted for
 * a given age only, then the image is looked up or uploaded again.
 *
 * Where it lives: in the Redis the account shares its rate limit through, when there is one, so
 * that every n8n process of the account (queue-mode workers, several mains) shares it and it
 * outlives restarts; otherwise in this process only. Never in the workflow's static data: n8n
 * saves that as one object after each execution, and a copy written by this node could overwrite
 * the trigger's newer state.
 */
export interface KnownImages {
	/** Whether what is remembered outlives this process and is seen by every process of the account. */
	readonly shared: boolean;
	/** Hashcodes of the md5s that are known and not older than the age; unknown ones are absent. */
	recall(md5s: string[]): Promise<Map<string, string>>;
	remember(entries: Array<{ md5: string; hashcode: string }>): Promise<void>;
	/** Forgets every image of the account's customer node; how many were known. */
	forget(): Promise<number>;
}

/** Entries per account and customer node in Redis; beyond it the entries that expire first are dropped. */
export const REDIS_MAX_ENTRIES = 200_000;
/** Entries in this process for all accounts together; beyond it the oldest are dropped. */
export const PROCESS_MAX_ENTRIES = 100_000;

const KEY_PREFIX = 'n8n-nodes-product-data-integration:images:';

/** Names an account's customer node by a digest: never the account's name, nor the customer id. */
function knownImagesScope(credentials: ICredentialDataDecryptedObject, customer: CustomerOverride | undefined): string {
	const { customerIdType, customerId } = effectiveCustomer(credentials, customer);
	const username = typeof credentials.username === 'string' ? credentials.username : '';
	const account = accountKey(String(credentials.baseUrl), username);
	return createHash('sha256').update(`${account}\n${customerIdType}:${customerId}`).digest('hex');
}

// Process memory: one map for every scope, in insertion order, so the oldest entries go first.
const processEntries = new Map<string, { hashcode: string; expiresAt: number }>();

export class ProcessKnownImages implements KnownImages {
	readonly shared = false;

	constructor(
		private readonly scope: string,
		private readonly ageMs: number,
		private readonly now: () => number = Date.now,
	) {}

	async recall(md5s: string[]): Promise<Map<string, string>> {
		const known = new Map<string, string>();
		const now = this.now();
		for (const md5 of md5s) {
			const entry = processEntries.get(`${this.scope}\n${md5}`);
			if (entry && entry.expiresAt > now) known.set(md5, entry.hashcode);
		}
		return known;
	}

	async remember(entries: Array<{ md5: string; hashcode: string }>): Promise<void> {
		const expiresAt = this.now() + this.ageMs;
		for (const { md5, hashcode } of entries) {
			const key = `${this.scope}\n${md5}`;
			processEntries.delete(key);
			processEntries.set(key, { hashcode, expiresAt });
		}
		for (const key of processEntries.keys()) {
			if (processEntries.size <= PROCESS_MAX_ENTRIES) break;
			processEntries.delete(key);
		}
	}

	async forget(): Promise<number> {
		let forgotten = 0;
		for (const key of processEntries.keys()) {
			if (!key.startsWith(`${this.scope}\n`)) continue;
			processEntries.delete(key);
			forgotten++;
		}
		return forgotten;
	}
}

// KEYS: the hash md5 -> hashcode, the sorted set md5 -> expiry (ms). ARGV: now, then the md5s.
// Answers a hashcode per md5, '' for one unknown or expired (a Lua table cannot hold nil).
const RECALL = `
local now = tonumber(ARGV[1])
local found = {}
for i = 2, #ARGV do
	local expiresAt = redis.call('ZSCORE', KEYS[2], ARGV[i])
	local hashcode = false
	if expiresAt and tonumber(expiresAt) > now then hashcode = redis.call('HGET', KEYS[1], ARGV[i]) end
	found[i - 1] = hashcode or ''
end
return found
`;

// ARGV: the cap, the keys' lifetime (ms), then md5, hashcode, expiry per entry. Both keys live as
// long as their newest entry: an account that stops syncing leaves nothing behind.
const REMEMBER = `
for i = 3, #ARGV, 3 do
	redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
	redis.call('ZADD', KEYS[2], ARGV[i + 2], ARGV[i])
end
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[1])
if excess > 0 then
	local dropped = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
	redis.call('ZREMRANGEBYRANK', KEYS[2], 0, excess - 1)
	redis.call('HDEL', KEYS[1], unpack(dropped))
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 0
`;

const FORGET = `
local count = redis.call('HLEN', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
return count
`;

// Lua's unpack() takes a few thousand values at most: entries are remembered in slices.
const ENTRIES_PER_COMMAND = 1000;

/** The answer of RECALL for `count` md5s: one string each, or undefined when it is not that. */
function readRecall(reply: unknown, count: number): string[] | undefined {
	return Array.isArray(reply) && reply.length === count && reply.every((value) => typeof value === 'string') ? reply : undefined;
}

function readCount(reply: unknown): number | undefined {
	return typeof reply === 'number' && Number.isInteger(reply) && reply >= 0 ? reply : undefined;
}

/** What a remembered hashcode can be: a short text without control characters ('' is an unknown md5). */
const HASHCODE = /^[^\x00-\x1f\x7f]{1,256}$/;

export class RedisKnownImages implements KnownImages {
	readonly shared = true;

	private readonly hashKey: string;

	private readonly expiryKey: string;

	/** Shares the connection, and its bounds and checks, of the account's rate limit in the same Redis. */
	private readonly store: SharedBucketStore;

	constructor(
		connection: RedisConnection,
		scope: string,
		private readonly ageMs: number,
		private readonly maxEntries = REDIS_MAX_ENTRIES,
		private readonly now: () => number = Date.now,
	) {
		this.store = storeFor(connection);
		this.hashKey = `${KEY_PREFIX}${scope}`;
		this.expiryKey = `${KEY_PREFIX}${scope}:expiry`;
	}

	async recall(md5s: string[]): Promise<Map<string, string>> {
		const known = new Map<string, string>();
		if (md5s.length === 0) return known;
		const found = await this.store.run(RECALL, [this.hashKey, this.expiryKey], [String(this.now()), ...md5s], (reply) =>
			readRecall(reply, md5s.length),
		);
		md5s.forEach((md5, n) => {
			if (HASHCODE.test(found[n])) known.set(md5, found[n]);
		});
		return known;
	}

	async remember(entries: Array<{ md5: string; hashcode: string }>): Promise<void> {
		if (entries.length === 0) return;
		const expiresAt = String(this.now() + this.ageMs);
		for (let start = 0; start < entries.length; start += ENTRIES_PER_COMMAND) {
			const args = entries.slice(start, start + ENTRIES_PER_COMMAND).flatMap(({ md5, hashcode }) => [md5, hashcode, expiresAt]);
			await this.store.run(REMEMBER, [this.hashKey, this.expiryKey], [String(this.maxEntries), String(Math.ceil(this.ageMs)), ...args], readCount);
		}
	}

	async forget(): Promise<number> {
		return await this.store.run(FORGET, [this.hashKey, this.expiryKey], [], readCount);
	}
}

/**
 * The known images of the credential's account and customer node (or `customer`) in the Redis the
 * account shares its rate limit through (see sharingFor), or in this process when there is none; when Redis
 * cannot be asked, this process's memory stands in (and `unavailable` says why, once).
 */
export class KnownImagesWithFallback implements KnownImages {
	private readonly local: ProcessKnownImages;

	private readonly redis: RedisKnownImages | undefined;

	private failed = false;

	/** `unavailable`: told once why Redis could not be asked. */
	constructor(
		credentials: ICredentialDataDecryptedObject,
		customer: CustomerOverride | undefined,
		ageMs: number,
		private readonly unavailable: (reason: string) => void,
	) {
		const scope = knownImagesScope(credentials, customer);
		const { connection } = sharingFor(credentials);
		this.local = new ProcessKnownImages(scope, ageMs);
		this.redis = connection ? new RedisKnownImages(connection, scope, ageMs) : undefined;
	}

	get shared(): boolean {
		return this.redis !== undefined && !this.failed;
	}

	async recall(md5s: string[]): Promise<Map<string, string>> {
		return await this.either(async (store) => await store.recall(md5s));
	}

	async remember(entries: Array<{ md5: string; hashcode: string }>): Promise<void> {
		await this.either(async (store) => await store.remember(entries));
	}

	/** Forgets in this process and in Redis; a Redis that cannot be asked fails it, since what it holds would stay known. */
	async forget(): Promise<number> {
		const local = await this.local.forget();
		return this.redis ? await this.redis.forget() : local;
	}

	private async either<T>(use: (store: KnownImages) => Promise<T>): Promise<T> {
		if (this.redis && !this.failed) {
			try {
				return await use(this.redis);
			} catch (error) {
				this.failed = true;
				this.unavailable((error as Error).message);
			}
		}
		return await use(this.local);
	}
}
