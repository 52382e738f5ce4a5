import { createHash } from 'crypto';
import Redis, { type RedisOptions } from 'ioredis';

import { gcraSpacing, penaltyMs } from './gcra';
import { waitWith, type Sleep } from './time';
import {
	LimiterCancelledError,
	MAX_LIMIT_WAIT_MS,
	waitTooLongError,
	type AcquireOptions,
	type BucketTerms,
	type LimiterGrant,
	type RateLimiter,
} from './limiter';

/**
 * The account's bucket kept in Redis, so that every n8n process using the account (queue-mode
 * workers, several mains) meters one budget: the same GCRA as the in-process limiter, with the
 * theoretical arrival time (TAT) in one Redis key, moved by Lua scripts that Redis runs atomically
 * and that read the Redis server's clock, so the processes' own clocks never matter.
 *
 * A request reserves its slot in one round trip and then sleeps until it, locally: nothing polls
 * Redis. Reservations are served in the order Redis receives them, whatever process sends them.
 */

export interface RedisConnection {
	host: string;
	port: number;
	db: number;
	/** 0: IPv4 or IPv6 (n8n's QUEUE_BULL_REDIS_DUALSTACK); default IPv4. */
	family?: number;
	username?: string;
	password?: string;
	/** Undefined: plain TCP. */
	tls?: RedisOptions['tls'];
}

/** Redis could not be asked (not connected, timed out, refused the script). */
export class SharedBucketUnavailableError extends Error {
	constructor(readonly reason: string) {
		super(`The shared rate limit in Redis is unavailable: ${reason}`);
		this.name = 'SharedBucketUnavailableError';
	}
}

/** Keys outlive the moment their bucket is empty again by this much, then Redis drops them. */
const IDLE_EXPIRY_MARGIN_MS = 1000;

const KEY_PREFIX = 'n8n-nodes-product-data-integration:bucket:';

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
const RESERVE = `${CLOCK}
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
const PUSH = `${CLOCK}
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
const RELEASE = `${CLOCK}
local current = tonumber(redis.call('GET', KEYS[1]))
local held = tonumber(redis.call('GET', KEYS[2]) or 0)
if current and tonumber(ARGV[1]) >= held then store(current - tonumber(ARGV[2])) end
return 1
`;

interface BucketCommands {
	pdiReserve(
		key: string,
		emissionMs: string,
		toleranceMs: string,
		marginMs: string,
	): Promise<[string, string, string]>;
	pdiPush(key: string, holdKey: string, atLeastMs: string, byMs: string, penalty: string, marginMs: string): Promise<number>;
	pdiRelease(key: string, holdKey: string, reservedFrom: string, emissionMs: string, marginMs: string): Promise<number>;
}

type BucketClient = Redis & BucketCommands;

/** Connect and command time limits: a Redis that does not answer must not hold requests up long. */
const CONNECT_TIMEOUT_MS = 3000;
const COMMAND_TIMEOUT_MS = 2000;

/**
 * One connection per Redis server (and login) for the whole process, shared by every account that
 * uses it. Commands are not queued while it is down: a request then goes through the in-process
 * limiter at once, and a later request connects again.
 */
export class SharedBucketStore {
	private readonly client: BucketClient;

	private connecting: Promise<void> | undefined;

	private closed = false;

	private lastError = '';

	constructor(
		connection: RedisConnection,
		/** Names the connection (a digest: the password is part of it) without holding it readable. */
		readonly id = connectionId(connection),
	) {
		const options: RedisOptions = {
			host: connection.host,
			port: connection.port,
			db: connection.db,
			family: connection.family,
			username: connection.username || undefined,
			password: connection.password || undefined,
			tls: connection.tls,
			lazyConnect: true,
			enableOfflineQueue: false,
			maxRetriesPerRequest: 0,
			connectTimeout: CONNECT_TIMEOUT_MS,
			commandTimeout: COMMAND_TIMEOUT_MS,
			// No reconnection timers in the background: they would keep a finished process (e.g.
			// `n8n execute`) alive while Redis is away. ready() connects again when a request asks.
			retryStrategy: () => null,
			// Nothing of this connection needs a name: it carries no secret, only digests.
			connectionName: 'n8n-nodes-product-data-integration',
		};
		this.client = new Redis(options) as BucketClient;
		this.client.defineCommand('pdiReserve', { numberOfKeys: 1, lua: RESERVE });
		this.client.defineCommand('pdiPush', { numberOfKeys: 2, lua: PUSH });
		this.client.defineCommand('pdiRelease', { numberOfKeys: 2, lua: RELEASE });
		// Without a listener ioredis prints every connection error; the state is reported instead.
		this.client.on('error', (error: Error) => {
			this.lastError = error.message;
		});
		this.client.on('ready', () => {
			this.lastError = '';
		});
		// An idle connection must not keep a process alive that is done (e.g. `n8n execute`).
		this.client.on('connect', () => {
			this.client.stream.unref();
		});
	}

	/**
	 * Whether commands can be sent now; connects when there is no connection (the first time, or
	 * after Redis went away), within the connect timeout.
	 */
	async ready(): Promise<boolean> {
		if (this.closed) return false;
		if (!this.connecting || this.client.status === 'end') {
			// The error event has the better reason (e.g. WRONGPASS); connect() then only says "closed".
			this.connecting = this.client.connect().catch((error: Error) => {
				this.lastError ||= error.message;
			});
		}
		if (['wait', 'connecting', 'connect'].includes(this.client.status)) await this.connecting;
		return this.client.status === 'ready';
	}

	/** Why the store is not ready, in words for a log line or a notice. */
	get problem(): string {
		return this.lastError || `connection ${this.client.status}`;
	}

	bucket(accountKey: string, terms: BucketTerms, sleep: Sleep): SharedBucket {
		return new SharedBucket(this, sharedBucketKey(accountKey), terms, sleep);
	}

	async close(): Promise<void> {
		this.closed = true;
		if (this.client.status === 'ready') {
			await this.client.quit().catch(() => this.client.disconnect(false));
		} else if (this.client.status !== 'end') {
			// Not for a connection that is gone already: ioredis would wait 2 s for its socket to close
			// again, keeping the process alive that long.
			this.client.disconnect(false);
		}
	}

	/** `reservedFrom`: where in the schedule the slot lies, for release(). */
	async reserve(
		key: string,
		emissionMs: number,
		toleranceMs: number,
	): Promise<{ waitMs: number; leadMs: number; reservedFrom: string }> {
		const [wait, lead, reservedFrom] = await this.command(() =>
			this.client.pdiReserve(key, String(emissionMs), String(toleranceMs), String(IDLE_EXPIRY_MARGIN_MS)),
		);
		return { waitMs: Number(wait), leadMs: Number(lead), reservedFrom };
	}

	/** TAT = max(now + atLeastMs, TAT + byMs), on the server's clock; a penalty also holds the bucket full until then. */
	async push(
		key: string,
		{ atLeastMs, byMs = 0, penalty = false }: { atLeastMs?: number; byMs?: number; penalty?: boolean },
	): Promise<void> {
		// A number Lua reads, far enough back to lose against any TAT.
		const floor = atLeastMs === undefined ? '-1e15' : String(atLeastMs);
		await this.command(() =>
			this.client.pdiPush(key, holdKey(key), floor, String(byMs), penalty ? '1' : '0', String(IDLE_EXPIRY_MARGIN_MS)),
		);
	}

	/** Gives back the slot reserve() booked from `reservedFrom`, unless a penalty since holds the bucket beyond it. */
	async release(key: string, reservedFrom: string, emissionMs: number): Promise<void> {
		await this.command(() =>
			this.client.pdiRelease(key, holdKey(key), reservedFrom, String(emissionMs), String(IDLE_EXPIRY_MARGIN_MS)),
		);
	}

	private async command<T>(send: () => Promise<T>): Promise<T> {
		if (!(await this.ready())) throw new SharedBucketUnavailableError(this.problem);
		const outcome = await send().then(
			(value) => ({ value }),
			(error: Error) => ({ error }),
		);
		if ('value' in outcome) return outcome.value;
		this.lastError = outcome.error.message;
		throw new SharedBucketUnavailableError(this.lastError);
	}
}

function connectionId(connection: RedisConnection): string {
	return createHash('sha256').update(JSON.stringify(connection)).digest('hex');
}

const stores = new Map<string, SharedBucketStore>();

/** The process's one store (connection) for a Redis server and login, created on first use. */
export function storeFor(connection: RedisConnection): SharedBucketStore {
	const id = connectionId(connection);
	let store = stores.get(id);
	if (!store) {
		store = new SharedBucketStore(connection, id);
		stores.set(id, store);
	}
	return store;
}

/** Redis key of an account: a digest (see accountKey), never the account's name or secret. */
export function sharedBucketKey(accountKey: string): string {
	return `${KEY_PREFIX}${accountKey}`;
}

/** Redis key of how far the latest penalty holds a bucket full (see RELEASE). */
function holdKey(bucketKey: string): string {
	return `${bucketKey}:hold`;
}

/**
 * One account's bucket in Redis. Same terms, safety margin and corrections as the in-process
 * GcraLimiter; acquire() throws SharedBucketUnavailableError when Redis cannot be asked.
 */
export class SharedBucket implements RateLimiter {
	private terms: BucketTerms;

	/** How far (this process's clock) this process last saw the bucket booked: by its reservations and pushes. */
	private seenBookedUntil = Number.NEGATIVE_INFINITY;

	constructor(
		private readonly store: SharedBucketStore,
		readonly key: string,
		terms: BucketTerms,
		private readonly sleep: Sleep,
	) {
		this.terms = { ...terms };
	}

	setTerms(terms: BucketTerms): void {
		this.terms = { ...terms };
	}

	getTerms(): BucketTerms {
		return { ...this.terms };
	}

	async acquire(options: AcquireOptions = {}): Promise<LimiterGrant> {
		const { signal, logger } = options;
		if (signal?.aborted) throw new LimiterCancelledError();
		const { emissionMs, toleranceMs } = gcraSpacing(this.terms);
		const { waitMs, leadMs, reservedFrom } = await this.store.reserve(this.key, emissionMs, toleranceMs);
		this.seenBookedFor(waitMs + leadMs + emissionMs);
		if (waitMs > MAX_LIMIT_WAIT_MS) {
			await this.giveBack(reservedFrom, emissionMs);
			throw waitTooLongError(waitMs, "the n8n processes sharing the account's bucket in Redis have booked it that far ahead");
		}
		if (waitMs > 0) {
			logger?.debug('Waiting for the shared request rate limit of the product-data integration service', {
				expectedWaitMs: Math.round(waitMs),
			});
		}
		const waited = await waitWith(this.sleep, waitMs, signal).then(
			() => true,
			() => false,
		);
		if (!waited) {
			await this.giveBack(reservedFrom, emissionMs);
			throw new LimiterCancelledError();
		}
		const grantedAt = Date.now();
		let settled = false;
		return {
			settle: async () => {
				if (settled) return;
				settled = true;
				// As in GcraLimiter.take(): a request granted into an idle bucket may reach the
				// service late, which then drains its bucket from a later moment; move the schedule
				// by that lateness (at most max(interval, 1 s)) beyond the slot's own lead.
				const lateMs = Math.min(Date.now() - grantedAt, Math.max(emissionMs, 1000)) - leadMs;
				if (lateMs > 0) await this.store.push(this.key, { byMs: lateMs }).catch(() => undefined);
			},
		};
	}

	/**
	 * The service refused a request (429/503): the bucket counts as full until `retryAfterMs` (or
	 * one interval) from now, for every process.
	 */
	async penalize(retryAfterMs?: number): Promise<void> {
		const ms = penaltyMs(retryAfterMs, gcraSpacing(this.terms));
		await this.store.push(this.key, { atLeastMs: ms, penalty: true });
		this.seenBookedFor(ms);
	}

	/**
	 * Only Redis knows how far the shared bucket is booked. A process that cannot ask it goes by
	 * what it saw last (the slots booked then are still to be sent), and counts the bucket full at
	 * least: the other processes may have filled it meanwhile.
	 */
	bookedAheadMs(): number {
		return Math.max(this.terms.capacity * gcraSpacing(this.terms).emissionMs, this.seenBookedUntil - Date.now());
	}

	/**
	 * Adds to the shared schedule what this process booked alone while Redis was away (`backlogMs`:
	 * how far its own requests still book the bucket), on top of what the others booked meanwhile.
	 */
	async addBacklog(backlogMs: number): Promise<void> {
		if (backlogMs <= 0) return;
		await this.store.push(this.key, { atLeastMs: backlogMs, byMs: backlogMs });
	}

	private seenBookedFor(ms: number): void {
		this.seenBookedUntil = Math.max(this.seenBookedUntil, Date.now() + ms);
	}

	private async giveBack(reservedFrom: string, emissionMs: number): Promise<void> {
		await this.store.release(this.key, reservedFrom, emissionMs).catch(() => undefined);
	}
}
