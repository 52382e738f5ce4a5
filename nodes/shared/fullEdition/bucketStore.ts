import { createHash } from 'crypto';
import Redis, { ReplyError, type RedisOptions } from 'ioredis';

import {
	IDLE_EXPIRY_MARGIN_MS,
	isDone,
	PUSH,
	readReservation,
	RELEASE,
	RESERVE,
	type Reservation,
} from './bucketScripts';
import { unlessCancelled } from './cancellable';
import { SharedBucket } from './sharedBucket';
import type { BucketTerms, Sleep } from '../throttle';

/*
 * The connection to Redis that the accounts' buckets (./sharedBucket.ts) and the known images
 * (./knownImages.ts) are kept through: one per Redis server and login, every reply checked.
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

/**
 * Redis could not be asked (not connected, timed out, refused the script). The message is the
 * reason alone: each user of the connection (the bucket, the known images, the product memory)
 * says what it could not do.
 */
export class RedisUnavailableError extends Error {
	constructor(readonly reason: string) {
		super(reason);
		this.name = 'RedisUnavailableError';
	}
}

const KEY_PREFIX = 'n8n-nodes-product-data-integration:bucket:';

interface BucketCommands {
	pdiReserve(
		key: string,
		emissionMs: string,
		toleranceMs: string,
		marginMs: string,
	): Promise<unknown>;
	pdiPush(
		key: string,
		holdKey: string,
		atLeastMs: string,
		byMs: string,
		penalty: string,
		marginMs: string,
	): Promise<unknown>;
	pdiRelease(
		key: string,
		holdKey: string,
		reservedFrom: string,
		emissionMs: string,
		marginMs: string,
	): Promise<unknown>;
}

type BucketClient = Redis & BucketCommands;

/** Connect and command time limits: a Redis that does not answer must not hold requests up long. */
const CONNECT_TIMEOUT_MS = 3000;
const COMMAND_TIMEOUT_MS = 2000;

/** An answer that is not what the script returns: the connection does not lead to what it should. */
const UNEXPECTED_REPLY = 'Redis answered with something else than the script returns';

/**
 * One connection per Redis server (and login) for the whole process, shared by every account that
 * uses it. Commands are not queued while it is down: a request then goes through the in-process
 * limiter at once, and a later request connects again. A connection that stops answering (a
 * firewall or NAT that dropped it silently, a failover behind the same name) is closed at the
 * first command that times out, so the next request connects anew instead of waiting for TCP to
 * give up, which takes hours.
 */
export class SharedBucketStore {
	private readonly client: BucketClient;

	/** The current connection's opening: connected, and in the credential's database. */
	private opening: Promise<boolean> | undefined;

	private closed = false;

	private lastError = '';

	constructor(
		private readonly connection: RedisConnection,
		/** Names the connection (a digest: the password is part of it) without holding it readable. */
		readonly id = connectionId(connection),
	) {
		const options: RedisOptions = {
			host: connection.host,
			port: connection.port,
			// The database is selected by open(): ioredis would fall back to database 0, saying so
			// only in an error event, when the server has no such database.
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
		// An idle connection must not keep a process alive that is done (e.g. `n8n execute`).
		this.client.on('connect', () => {
			this.client.stream.unref();
		});
	}

	/**
	 * Whether commands can be sent now; connects when there is no connection (the first time, or
	 * after Redis went away), within the connect timeout. A cancelled request does not wait for it.
	 */
	async ready(signal?: AbortSignal): Promise<boolean> {
		if (this.closed) return false;
		if (!this.opening || this.client.status === 'end') this.opening = this.open();
		return (await unlessCancelled(this.opening, signal)) && this.client.status === 'ready';
	}

	private async open(): Promise<boolean> {
		// A dropped connection is still closing (see disconnect()): connecting before it has would fail.
		if (!['wait', 'end'].includes(this.client.status))
			await new Promise((resolve) => this.client.once('end', resolve));
		try {
			// The error event has the better reason (e.g. WRONGPASS); connect() then only says "closed".
			this.lastError = '';
			await this.client.connect();
		} catch (error) {
			this.lastError ||= (error as Error).message;
			return false;
		}
		if (this.connection.db === 0) return true;
		try {
			await this.client.select(this.connection.db);
			return true;
		} catch (error) {
			this.lastError = `Redis has no database ${this.connection.db} (${(error as Error).message}): check the Redis Database Number`;
			this.disconnect();
			return false;
		}
	}

	/** Why the store is not ready, in words for a log line or a notice. */
	get problem(): string {
		return this.lastError || `connection ${this.client.status}`;
	}

	bucket(accountKey: string, terms: BucketTerms, sleep: Sleep): SharedBucket {
		return new SharedBucket(this, sharedBucketKey(accountKey), terms, sleep);
	}

	/**
	 * Ends the connection at once, without waiting for the other side to acknowledge, which a
	 * connection dropped on the way never does; a later command connects anew. Not for a
	 * connection that is gone already: ioredis would wait 2 s for its socket to close again,
	 * keeping the process alive that long.
	 */
	disconnect(): void {
		this.opening = undefined;
		if (this.client.status === 'end') return;
		this.client.disconnect(false);
		// ioredis ends the socket gracefully; a socket that is still being made has none yet.
		if (this.client.status !== 'wait')
			(this.client.stream as Redis['stream'] | undefined)?.destroy();
	}

	async close(): Promise<void> {
		this.closed = true;
		if (this.client.status === 'ready') {
			await this.client.quit().catch(() => this.client.disconnect(false));
		} else {
			this.disconnect();
		}
	}

	/** `reservedFrom`: where in the schedule the slot lies, for release(). */
	async reserve(
		key: string,
		emissionMs: number,
		toleranceMs: number,
		signal?: AbortSignal,
	): Promise<Reservation> {
		return await this.command(
			() =>
				this.client.pdiReserve(
					key,
					String(emissionMs),
					String(toleranceMs),
					String(IDLE_EXPIRY_MARGIN_MS),
				),
			(reply) => readReservation(reply, toleranceMs),
			signal,
		);
	}

	/** TAT = max(now + atLeastMs, TAT + byMs), on the server's clock; a penalty also holds the bucket full until then. */
	async push(
		key: string,
		{
			atLeastMs,
			byMs = 0,
			penalty = false,
		}: { atLeastMs?: number; byMs?: number; penalty?: boolean },
	): Promise<void> {
		// A number Lua reads, far enough back to lose against any TAT.
		const floor = atLeastMs === undefined ? '-1e15' : String(atLeastMs);
		await this.command(
			() =>
				this.client.pdiPush(
					key,
					holdKey(key),
					floor,
					String(byMs),
					penalty ? '1' : '0',
					String(IDLE_EXPIRY_MARGIN_MS),
				),
			(reply) => (isDone(reply) ? reply : undefined),
		);
	}

	/** Gives back the slot reserve() booked from `reservedFrom`, unless a penalty since holds the bucket beyond it. */
	async release(key: string, reservedFrom: string, emissionMs: number): Promise<void> {
		await this.command(
			() =>
				this.client.pdiRelease(
					key,
					holdKey(key),
					reservedFrom,
					String(emissionMs),
					String(IDLE_EXPIRY_MARGIN_MS),
				),
			(reply) => (isDone(reply) ? reply : undefined),
		);
	}

	/**
	 * Runs a script of another user of this connection (the image upload's known images) with the
	 * same bounds and checks as the bucket's own: `read` gives back the reply if it is the script's,
	 * undefined if not (the connection is then replaced). RedisUnavailableError when Redis
	 * cannot be asked.
	 */
	async run<T>(
		lua: string,
		keys: string[],
		args: string[],
		read: (reply: unknown) => T | undefined,
	): Promise<T> {
		return await this.command(() => this.client.eval(lua, keys.length, ...keys, ...args), read);
	}

	/**
	 * Sends one script and reads its reply with `read` (undefined: not the script's reply). An error
	 * that Redis itself answered leaves the connection as it is; a timeout, a broken connection or
	 * a reply that is not the script's closes it, so the next request connects anew.
	 */
	private async command<T>(
		send: () => Promise<unknown>,
		read: (reply: unknown) => T | undefined,
		signal?: AbortSignal,
	): Promise<T> {
		if (!(await this.ready(signal))) throw new RedisUnavailableError(this.problem);
		const outcome = await send().then(
			(reply) => ({ reply }),
			(error: Error) => ({ error }),
		);
		const value = 'reply' in outcome ? read(outcome.reply) : undefined;
		if (value !== undefined) return value;
		this.lastError = 'error' in outcome ? outcome.error.message : UNEXPECTED_REPLY;
		if (!('error' in outcome && outcome.error instanceof ReplyError)) this.disconnect();
		throw new RedisUnavailableError(this.lastError);
	}
}

/** Names a connection by a digest (the password is part of it) without holding it readable. */
export function connectionId(connection: RedisConnection): string {
	return createHash('sha256').update(JSON.stringify(connection)).digest('hex');
}

/** Redis key of an account: a digest (see accountKey), never the account's name or secret. */
export function sharedBucketKey(accountKey: string): string {
	return `${KEY_PREFIX}${accountKey}`;
}

/** Redis key of how far the latest penalty holds a bucket full (see RELEASE). */
function holdKey(bucketKey: string): string {
	return `${bucketKey}:hold`;
}
