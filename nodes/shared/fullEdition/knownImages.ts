import { createHash } from 'crypto';
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { HASHCODE, type KnownImages } from '../ports';
import type { RedisConnection, SharedBucketStore } from './bucketStore';
import { storeFor } from './sharedRegistry';
import { sharingFor } from './sharing';

/*
 * The known images of an account's customer node in Redis (full edition only), on the connection
 * the account's rate limit uses in the same Redis (see ./sharedRegistry.ts).
 */

/**
 * Bounds of the known images in Redis, which may be the queue's own, each per password holder (see
 * the transport's holderKey): entries per memory (an account's customer node; beyond it, the
 * entries that expire first are dropped), entries of all the holder's memories together, and how
 * many memories the holder keeps (beyond either, the holder's memories that expire first are dropped
 * whole, never the one being written). No holder's writes ever drop another holder's memories: what
 * a holder cannot keep costs that holder requests only.
 */
export interface RedisBounds {
	entries: number;
	entriesPerHolder: number;
	memoriesPerHolder: number;
}

const REDIS_BOUNDS: RedisBounds = {
	entries: 200_000,
	entriesPerHolder: 1_000_000,
	memoriesPerHolder: 1000,
};

/** Expired entries removed per write: a memory that keeps being written does not keep what expired. */
const PRUNED_PER_WRITE = 1000;

const KEY_PREFIX = 'n8n-nodes-product-data-integration:images:';
/**
 * Per holder, its memories with when their keys expire, and how many entries each holds: for the
 * holder's bounds. Named by a digest of the holder's key, which is never stored as it is.
 */
const HOLDER_PREFIX = 'n8n-nodes-product-data-integration:image-holder:';

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

// KEYS: the hash, the sorted set, the holder's scopes (sorted by when their keys expire), their entry
// counts. ARGV: now, the bounds (entries, entries per holder, scopes per holder), the writer's
// lifetime (ms), the key prefix, the scope, how many expired entries to remove, then md5, hashcode,
// expiry per entry.
// An entry's expiry and the keys' lifetime only grow: a writer with a short age never cuts what
// others remembered for longer. Both keys live as long as their longest-trusted entry: an account
// that stops syncing leaves nothing behind. Only the holder's own index is looked at, so only the
// holder's own memories are ever dropped. Dropping one whole names its keys from the prefix, which a Redis cluster would refuse (it is not supported: see sharing.ts).
const REMEMBER = `
local now = tonumber(ARGV[1])
local prefix, scope = ARGV[6], ARGV[7]
local function drop(hash, zset, members)
	if #members > 0 then
		redis.call('ZREM', zset, unpack(members))
		redis.call('HDEL', hash, unpack(members))
	end
end
drop(KEYS[1], KEYS[2], redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, tonumber(ARGV[8])))
for i = 9, #ARGV, 3 do
	redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
	local current = tonumber(redis.call('ZSCORE', KEYS[2], ARGV[i]) or 0)
	if tonumber(ARGV[i + 2]) > current then redis.call('ZADD', KEYS[2], ARGV[i + 2], ARGV[i]) end
end
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[2])
if excess > 0 then drop(KEYS[1], KEYS[2], redis.call('ZRANGE', KEYS[2], 0, excess - 1)) end
local lifetime = tonumber(ARGV[5])
if redis.call('PTTL', KEYS[1]) < lifetime then redis.call('PEXPIRE', KEYS[1], lifetime) end
if redis.call('PTTL', KEYS[2]) < lifetime then redis.call('PEXPIRE', KEYS[2], lifetime) end
redis.call('ZADD', KEYS[3], now + redis.call('PTTL', KEYS[1]), scope)
redis.call('HSET', KEYS[4], scope, redis.call('ZCARD', KEYS[2]))
local function forgetScope(other)
	redis.call('DEL', prefix .. other, prefix .. other .. ':expiry')
	redis.call('ZREM', KEYS[3], other)
	redis.call('HDEL', KEYS[4], other)
end
for _, other in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, tonumber(ARGV[8]))) do forgetScope(other) end
local total = 0
for _, count in ipairs(redis.call('HVALS', KEYS[4])) do total = total + tonumber(count) end
while total > tonumber(ARGV[3]) or redis.call('ZCARD', KEYS[3]) > tonumber(ARGV[4]) do
	local first = redis.call('ZRANGE', KEYS[3], 0, 1)
	local other = first[1]
	if other == scope then other = first[2] end
	if not other then break end
	total = total - tonumber(redis.call('HGET', KEYS[4], other) or 0)
	forgetScope(other)
end
local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
local indexLifetime = math.ceil(tonumber(last[2]) - now)
if indexLifetime > 0 then
	redis.call('PEXPIRE', KEYS[3], indexLifetime)
	redis.call('PEXPIRE', KEYS[4], indexLifetime)
end
return 0
`;

// KEYS: as REMEMBER's. ARGV: the scope.
const FORGET = `
local count = redis.call('HLEN', KEYS[1])
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
return count
`;

// Lua's unpack() takes a few thousand values at most: entries are remembered in slices.
const ENTRIES_PER_COMMAND = 1000;

/** The answer of RECALL for `count` md5s: one string each, or undefined when it is not that. */
function readRecall(reply: unknown, count: number): string[] | undefined {
	return Array.isArray(reply) &&
		reply.length === count &&
		reply.every((value) => typeof value === 'string')
		? reply
		: undefined;
}

function readCount(reply: unknown): number | undefined {
	return typeof reply === 'number' && Number.isInteger(reply) && reply >= 0 ? reply : undefined;
}

export class RedisKnownImages implements KnownImages {
	readonly shared = true;

	private readonly keys: string[];

	/** Shares the connection, and its bounds and checks, of the account's rate limit in the same Redis. */
	private readonly store: SharedBucketStore;

	private readonly bounds: RedisBounds;

	/** `holder`: the password holder whose memory `scope` is (see the transport's holderKey). */
	constructor(
		connection: RedisConnection,
		holder: string,
		private readonly scope: string,
		private readonly ageMs: number,
		bounds: Partial<RedisBounds> = {},
		private readonly now: () => number = Date.now,
	) {
		this.store = storeFor(connection);
		const holderKeys = `${HOLDER_PREFIX}${createHash('sha256').update(holder).digest('hex')}`;
		this.keys = [
			`${KEY_PREFIX}${scope}`,
			`${KEY_PREFIX}${scope}:expiry`,
			`${holderKeys}:scopes`,
			`${holderKeys}:scope-entries`,
		];
		this.bounds = { ...REDIS_BOUNDS, ...bounds };
	}

	async recall(md5s: string[]): Promise<Map<string, string>> {
		const known = new Map<string, string>();
		if (md5s.length === 0) return known;
		const found = await this.store.run(
			RECALL,
			this.keys.slice(0, 2),
			[String(this.now()), ...md5s],
			(reply) => readRecall(reply, md5s.length),
		);
		md5s.forEach((md5, n) => {
			if (HASHCODE.test(found[n])) known.set(md5, found[n]);
		});
		return known;
	}

	async remember(entries: Array<{ md5: string; hashcode: string }>): Promise<void> {
		if (entries.length === 0) return;
		const now = this.now();
		const expiresAt = String(now + this.ageMs);
		const { entries: perMemory, entriesPerHolder, memoriesPerHolder } = this.bounds;
		const head = [
			now,
			perMemory,
			entriesPerHolder,
			memoriesPerHolder,
			Math.ceil(this.ageMs),
			KEY_PREFIX,
			this.scope,
			PRUNED_PER_WRITE,
		].map(String);
		for (let start = 0; start < entries.length; start += ENTRIES_PER_COMMAND) {
			const args = entries
				.slice(start, start + ENTRIES_PER_COMMAND)
				.flatMap(({ md5, hashcode }) => [md5, hashcode, expiresAt]);
			await this.store.run(REMEMBER, this.keys, [...head, ...args], readCount);
		}
	}

	async forget(): Promise<number> {
		return await this.store.run(FORGET, this.keys, [this.scope], readCount);
	}
}

/** The known images of a customer node in the Redis the account shares its rate limit through, where it has one. */
export function knownImagesInRedis(
	credentials: ICredentialDataDecryptedObject,
	holder: string,
	scope: string,
	ageMs: number,
): KnownImages | undefined {
	const { connection } = sharingFor(credentials);
	return connection ? new RedisKnownImages(connection, holder, scope, ageMs) : undefined;
}
