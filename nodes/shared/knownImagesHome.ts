import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { HASHCODE } from './hashcode';
import type { KnownImages, SharedKnownImages } from './knownImages';
import type { RedisConnection, SharedBucketStore } from './throttle/redisBucket';
import { storeFor } from './throttle/sharedRegistry';
import { sharingFor } from './transport/sharing';

/*
 * Where the known images can be shared, for the full edition: the Redis the account shares its
 * rate limit through (queue mode, or Rate Limit Sharing set to Redis). The verified edition (n8n
 * Cloud) is built with ./knownImagesHome.verified.ts in its place: none, so this process only.
 */

/** Entries per account and customer node in Redis; beyond it the entries that expire first are dropped. */
const REDIS_MAX_ENTRIES = 200_000;

const KEY_PREFIX = 'n8n-nodes-product-data-integration:images:';

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

/** In the Redis of the account's rate limit, where it has one. */
export const sharedKnownImages: SharedKnownImages | undefined = (credentials: ICredentialDataDecryptedObject, scope: string, ageMs: number) => {
	const { connection } = sharingFor(credentials);
	return connection ? new RedisKnownImages(connection, scope, ageMs) : undefined;
};
