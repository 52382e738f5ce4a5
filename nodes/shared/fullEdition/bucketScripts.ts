/**
 * The Lua scripts that move an account's bucket in Redis (see sharedBucket.ts), and the checks of
 * what they return: a reply is used only when it has the shape and range the script gives, since
 * whatever answers on the Redis port (another program, a proxy, a server with other scripts under
 * the same digest) could send anything, and a reply read blindly either fails every request or
 * removes the rate limit. Anything else means Redis cannot be used now.
 */

/** Keys outlive the moment their bucket is empty again by this much, then Redis drops them. */
export const IDLE_EXPIRY_MARGIN_MS = 1000;

// Every script reads the server's clock in milliseconds (with microseconds as fraction) and keeps
// TAT as text with three decimals: Lua numbers are doubles, and Redis would truncate a returned
// number to an integer. `replicate_commands` lets Redis before 5 replicate a script that reads TIME.
const CLOCK = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local function store(tat)
	if tat <= now then
		redis.call('DEL', KEYS[1])
	else
		redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil(tat - now + tonumber(ARGV[#ARGV])))
	end
end
`;

/**
 * ARGV: emission interval, burst tolerance, expiry margin (ms).
 * Returns the wait until the request may go, how far its place in the schedule lies beyond that
 * moment (0 when the bucket was idle: see the grant's settle()), and where in the schedule (the
 * TAT it started from: see RELEASE).
 */
export const RESERVE = `${CLOCK}
local tat = math.max(tonumber(redis.call('GET', KEYS[1]) or 0), now)
local emission = tonumber(ARGV[1])
local start = math.max(now, tat - tonumber(ARGV[2]))
store(tat + emission)
return { string.format('%.3f', start - now), string.format('%.3f', tat - start), string.format('%.3f', tat) }
`;

/**
 * KEYS: the bucket, its hold. ARGV: at least this far from now (ms, the bucket counted full from
 * then), moved by this much (ms), whether it is a penalty ('1'), expiry margin. Penalties use the
 * first, late arrivals the second, requests sent while Redis was away both (GCRA: from now or the
 * TAT, whichever is later); a missing key is an empty bucket, which a late arrival cannot have made
 * fuller. A penalty's TAT is also kept as the bucket's hold (the latest such), which RELEASE respects.
 */
export const PUSH = `${CLOCK}
local current = tonumber(redis.call('GET', KEYS[1]) or 0)
local atLeast = tonumber(ARGV[1])
local tat = math.max(now + atLeast, current + tonumber(ARGV[2]))
if tat > current then store(tat) end
if ARGV[3] == '1' and now + atLeast > tonumber(redis.call('GET', KEYS[2]) or 0) then
	redis.call('SET', KEYS[2], string.format('%.3f', now + atLeast), 'PX', math.ceil(math.max(tat, current) - now + tonumber(ARGV[#ARGV])))
end
return 1
`;

/**
 * KEYS: the bucket, its hold. ARGV: the TAT the reservation started from, emission interval, expiry
 * margin. Gives back the slot of a request that was never sent, unless a penalty since holds the
 * bucket full beyond that slot: the slot then lies in time the service counted full anyway, and
 * giving it back would undo the penalty for the requests booked after it.
 */
export const RELEASE = `${CLOCK}
local current = tonumber(redis.call('GET', KEYS[1]))
local held = tonumber(redis.call('GET', KEYS[2]) or 0)
if current and tonumber(ARGV[1]) >= held then store(current - tonumber(ARGV[2])) end
return 1
`;

/** A reservation as RESERVE returns it, in milliseconds; `reservedFrom` as the script wrote it. */
export interface Reservation {
	waitMs: number;
	leadMs: number;
	reservedFrom: string;
}

/**
 * No schedule this package writes books a bucket further ahead than the longest wait a request
 * accepts (a refusal's Retry-After, or a reservation, beyond it fail their request) plus a full
 * bucket and what a process sent alone meanwhile; a day is far beyond that, and a wait beyond it
 * can only be a reply that is not the script's.
 */
const MOST_PLAUSIBLE_WAIT_MS = 24 * 60 * 60_000;

/** Rounding of the script's three decimals. */
const ROUNDING_MS = 0.001;

/** A number as the scripts write them (string.format('%.3f')): digits, a point, three decimals. */
function scriptNumber(value: unknown): number | undefined {
	if (typeof value !== 'string' || !/^-?\d{1,16}\.\d{3}$/.test(value)) return undefined;
	return Number(value);
}

/**
 * What RESERVE returned, if it is what the script returns: three numbers, the wait and the lead
 * not negative, the lead within the burst tolerance, the wait within a day; undefined otherwise.
 */
export function readReservation(reply: unknown, toleranceMs: number): Reservation | undefined {
	if (!Array.isArray(reply) || reply.length !== 3) return undefined;
	const [waitMs, leadMs, tat] = reply.map(scriptNumber);
	if (waitMs === undefined || leadMs === undefined || tat === undefined) return undefined;
	if (waitMs < 0 || waitMs > MOST_PLAUSIBLE_WAIT_MS) return undefined;
	if (leadMs < 0 || leadMs > toleranceMs + ROUNDING_MS) return undefined;
	return { waitMs, leadMs, reservedFrom: reply[2] as string };
}

/** PUSH and RELEASE return 1, and nothing else. */
export function isDone(reply: unknown): boolean {
	return reply === 1;
}
