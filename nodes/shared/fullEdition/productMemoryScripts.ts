/*
 * The Lua scripts of the memory per product in Redis (./productMemory.ts) and the checks of their
 * replies: a reply that is not the script's answer is undefined, and the connection is replaced.
 */

// KEYS: the memory. ARGV: the product keys. Answers each one's value, false where there is none.
export const RECALL = `return redis.call('HMGET', KEYS[1], unpack(ARGV))`;

// KEYS: the memory, when its products were seen, its night. ARGV: the memory's lifetime, then the
// product keys. As RECALL, and marks each key seen in the current night.
export const RECALL_SEEN = `
local night = redis.call('GET', KEYS[3]) or '0'
local keys = {unpack(ARGV, 2)}
local seen = {}
for _, key in ipairs(keys) do
	seen[#seen + 1] = key
	seen[#seen + 1] = night
end
redis.call('HSET', KEYS[2], unpack(seen))
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return redis.call('HMGET', KEYS[1], unpack(keys))
`;

// KEYS: the memory, when its products were seen, the holder's product counts. ARGV: the night,
// the scan's cursor, how many to scan, the memory's name. Forgets the products of one step of the
// scan that were not seen in the night; answers the next cursor, then key and value of each.
export const FORGET_UNSEEN = `
local scan = redis.call('HSCAN', KEYS[1], ARGV[2], 'COUNT', ARGV[3])
local answer = {scan[1]}
local fields = scan[2]
for i = 1, #fields, 2 do
	if redis.call('HGET', KEYS[2], fields[i]) ~= ARGV[1] then
		redis.call('HDEL', KEYS[1], fields[i])
		redis.call('HDEL', KEYS[2], fields[i])
		answer[#answer + 1] = fields[i]
		answer[#answer + 1] = fields[i + 1]
	end
end
if #answer > 1 and redis.call('HEXISTS', KEYS[3], ARGV[4]) == 1 then
	redis.call('HSET', KEYS[3], ARGV[4], redis.call('HLEN', KEYS[1]))
end
return answer
`;

/** The claimant of a collected product: any run may collect it again (its newer content replaces it). */
const COLLECTION = 'collected';

// Shared by the scripts: the run holding a claim while it lasts, or nil.
const CLAIMANT = `
local function claimant(claims, key, now)
	local claim = redis.call('HGET', claims, key)
	if not claim then return nil end
	local run, untilMs = string.match(claim, '^(%S+) (%d+)$')
	if run and tonumber(untilMs) > now then return run end
	return nil
end
`;

// KEYS: the memory, its claims, the holder's memories (sorted by when they expire), their product
// counts. ARGV: now, run, until, the bounds (per memory, per holder), the memory's name, then the
// product keys. Answers {0, keys another run holds...} having claimed the others, or {1} when the
// new keys would pass a bound (nothing claimed).
export const CLAIM = `${CLAIMANT}
local now, run, untilMs = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local taken, free, fresh = {}, {}, 0
for i = 7, #ARGV do
	local holder = claimant(KEYS[2], ARGV[i], now)
	if holder and holder ~= run and holder ~= '${COLLECTION}' then
		taken[#taken + 1] = ARGV[i]
	else
		free[#free + 1] = ARGV[i]
		if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 0 then fresh = fresh + 1 end
	end
end
for _, gone in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
	redis.call('ZREM', KEYS[3], gone)
	redis.call('HDEL', KEYS[4], gone)
end
local own = redis.call('HLEN', KEYS[1])
local others = 0
local counts = redis.call('HGETALL', KEYS[4])
for i = 1, #counts, 2 do
	if counts[i] ~= ARGV[6] then others = others + tonumber(counts[i + 1]) end
end
if own + fresh > tonumber(ARGV[4]) or others + own + fresh > tonumber(ARGV[5]) then return {1} end
for _, key in ipairs(free) do redis.call('HSET', KEYS[2], key, run .. ' ' .. ARGV[3]) end
if redis.call('PTTL', KEYS[2]) < untilMs - now then redis.call('PEXPIRE', KEYS[2], untilMs - now) end
local answer = {0}
for _, key in ipairs(taken) do answer[#answer + 1] = key end
return answer
`;

// KEYS: as CLAIM's. ARGV: now, run, the memory's lifetime, its name, how many entries, then key and
// value per entry, then the keys whose claims the run lets go. Writes only what the run still
// claims. Answers how many entries were written.
export const REMEMBER = `${CLAIMANT}
local now, run, lifetime = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local entries = tonumber(ARGV[5])
local written = 0
for i = 6, 5 + 2 * entries, 2 do
	if claimant(KEYS[2], ARGV[i], now) == run then
		redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
		written = written + 1
	end
end
for i = 6 + 2 * entries, #ARGV do
	local claim = redis.call('HGET', KEYS[2], ARGV[i])
	if claim and string.match(claim, '^(%S+) ') == run then redis.call('HDEL', KEYS[2], ARGV[i]) end
end
if written > 0 then
	redis.call('PEXPIRE', KEYS[1], lifetime)
	redis.call('ZADD', KEYS[3], now + lifetime, ARGV[4])
	redis.call('HSET', KEYS[4], ARGV[4], redis.call('HLEN', KEYS[1]))
	redis.call('PEXPIRE', KEYS[3], lifetime)
	redis.call('PEXPIRE', KEYS[4], lifetime)
end
return written
`;

// KEYS: the claims, the collected products, their order, how their documents are built. ARGV: now,
// run, until, how documents are built, then key and staged value per product. Answers {1, how
// documents are built} when the products waiting are for other documents (nothing collected), else
// {0, keys another run holds...} having collected the others.
export const COLLECT = `${CLAIMANT}
local now, run, untilMs = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local held = redis.call('GET', KEYS[4])
if held and held ~= ARGV[4] and redis.call('LLEN', KEYS[3]) > 0 then return {1, held} end
local answer, collected = {0}, 0
for i = 5, #ARGV, 2 do
	local holder = claimant(KEYS[1], ARGV[i], now)
	if holder and holder ~= run and holder ~= '${COLLECTION}' then
		answer[#answer + 1] = ARGV[i]
	else
		if redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1]) == 1 then redis.call('RPUSH', KEYS[3], ARGV[i]) end
		redis.call('HSET', KEYS[1], ARGV[i], '${COLLECTION} ' .. ARGV[3])
		collected = collected + 1
	end
end
if collected > 0 then
	redis.call('SET', KEYS[4], ARGV[4])
	for i = 2, 4 do redis.call('PEXPIRE', KEYS[i], untilMs - now) end
	if redis.call('PTTL', KEYS[1]) < untilMs - now then redis.call('PEXPIRE', KEYS[1], untilMs - now) end
end
return answer
`;

// KEYS: as COLLECT's, then the documents being taken (run -> "products left to take, until when").
// ARGV: now, run, until (of the claims), least, want, slice, until (of the document being taken).
// A run's first call sets its document's size: the products waiting beside the documents other runs
// are taking, at most want, and only when at least least; its calls then take that many in slices,
// so runs taking at once never share out a document's worth between them. Answers {} when the run
// has no document being taken and too few products wait, else how documents are built, how many of
// the document are left to take, then key and staged value of each product taken (the oldest, at
// most slice), claimed by the run.
export const TAKE = `
local now, run, untilMs = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local least, want, slice, takingUntil = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local others, left = 0, nil
local taking = redis.call('HGETALL', KEYS[5])
for i = 1, #taking, 2 do
	local count, till = string.match(taking[i + 1], '^(%d+) (%d+)$')
	if not count or tonumber(till) <= now then redis.call('HDEL', KEYS[5], taking[i])
	elseif taking[i] == run then left = tonumber(count)
	else others = others + tonumber(count) end
end
if left == nil then
	local free = redis.call('LLEN', KEYS[3]) - others
	if free <= 0 or free < least then return {} end
	left = math.min(free, want)
end
local answer = {redis.call('GET', KEYS[4]) or '', ''}
for _ = 1, math.min(left, slice) do
	local key = redis.call('LPOP', KEYS[3])
	if not key then
		left = 0
		break
	end
	left = left - 1
	local staged = redis.call('HGET', KEYS[2], key)
	if staged then
		redis.call('HDEL', KEYS[2], key)
		redis.call('HSET', KEYS[1], key, ARGV[2] .. ' ' .. ARGV[3])
		answer[#answer + 1] = key
		answer[#answer + 1] = staged
	end
end
if left > 0 then
	redis.call('HSET', KEYS[5], run, left .. ' ' .. ARGV[7])
	redis.call('PEXPIRE', KEYS[5], takingUntil - now)
else
	redis.call('HDEL', KEYS[5], run)
end
answer[2] = tostring(left)
if redis.call('PTTL', KEYS[1]) < untilMs - now then redis.call('PEXPIRE', KEYS[1], untilMs - now) end
return answer
`;

export function readValues(reply: unknown, count: number): Array<string | undefined> | undefined {
	if (!Array.isArray(reply) || reply.length !== count) return undefined;
	const values: Array<string | undefined> = [];
	for (const value of reply) {
		if (value === null) values.push(undefined);
		else if (typeof value === 'string') values.push(value);
		else return undefined;
	}
	return values;
}

export function readClaim(reply: unknown): string[] | 'full' | undefined {
	if (!Array.isArray(reply) || (reply[0] !== 0 && reply[0] !== 1)) return undefined;
	if (reply[0] === 1) return reply.length === 1 ? 'full' : undefined;
	const taken = reply.slice(1);
	return taken.every((key) => typeof key === 'string') ? (taken as string[]) : undefined;
}

export function readCollect(
	reply: unknown,
): { notCollected: Set<string> } | { otherDocuments: string } | undefined {
	if (
		!Array.isArray(reply) ||
		!reply.every((value) => typeof value === 'string' || value === 0 || value === 1)
	)
		return undefined;
	if (reply[0] === 1)
		return typeof reply[1] === 'string' ? { otherDocuments: reply[1] } : undefined;
	if (reply[0] !== 0) return undefined;
	return { notCollected: new Set(reply.slice(1) as string[]) };
}

export function readTake(
	reply: unknown,
): { documents: string; left: number; products: Array<[string, string]> } | 'none' | undefined {
	if (!Array.isArray(reply) || !reply.every((value) => typeof value === 'string')) return undefined;
	if (reply.length === 0) return 'none';
	if (reply.length % 2 !== 0 || !/^\d+$/.test(reply[1] as string)) return undefined;
	const products: Array<[string, string]> = [];
	for (let index = 2; index < reply.length; index += 2)
		products.push([reply[index] as string, reply[index + 1] as string]);
	return { documents: reply[0] as string, left: Number(reply[1]), products };
}

export function readScanStep(reply: unknown): { cursor: string; pairs: string[] } | undefined {
	if (!Array.isArray(reply) || reply.length % 2 !== 1) return undefined;
	if (!reply.every((value) => typeof value === 'string')) return undefined;
	return { cursor: reply[0] as string, pairs: reply.slice(1) as string[] };
}

export function readNight(reply: unknown): string | undefined {
	if (reply === null) return '0';
	return typeof reply === 'string' && /^\d+$/.test(reply) ? reply : undefined;
}

export function readCount(reply: unknown): number | undefined {
	return typeof reply === 'number' && Number.isInteger(reply) && reply >= 0 ? reply : undefined;
}
