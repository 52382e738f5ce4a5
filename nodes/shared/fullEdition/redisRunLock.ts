import { createHash, randomBytes } from 'crypto';
import { sleep, type Logger } from 'n8n-workflow';

import { RedisUnavailableError, type SharedBucketStore } from './bucketStore';
import { unlessCancelled } from './cancellable';
import { RedisBackOff } from './redisBackOff';
import { storeFor } from './sharedRegistry';
import { sharingFor } from './sharing';
import type { LeaseRequest, RunLease } from '../ports';
import { waitWith } from '../throttle';

/*
 * The runs of one node kept apart across the n8n processes of queue mode (full edition only), in
 * the Redis the queue runs on, over the connection the account's bucket uses there: one key per
 * node, set only where it is absent, holding a random token for a lease that the run renews while
 * it goes on. Only the token's holder can renew or delete it (Lua scripts, atomic in Redis), and a
 * process that dies without letting go holds the node no longer than one lease.
 */

/**
 * How long a lease lasts without being renewed: how long a node stays held after its process
 * died, and the longest the renewal may be held up (an event loop blocked, Redis away) without
 * losing it.
 */
const LEASE_MS = 30_000;

/** How often a lease is renewed: often enough that stalls of up to 25 s cost nothing. */
const RENEWALS_PER_LEASE = 6;

const KEY_PREFIX = 'n8n-nodes-product-data-integration:run:';

// KEYS: the node's key. ARGV: the token, the lease (ms). 1: taken; 0: another holds it.
const TAKE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`;

// KEYS: the node's key. ARGV: the token, the lease (ms). 1: renewed; 0: the token holds it no longer.
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('PEXPIRE', KEYS[1], ARGV[2])
	return 1
end
return 0
`;

// KEYS: the node's key. ARGV: the token. 1: let go; 0: the token held it no longer.
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
	redis.call('DEL', KEYS[1])
	return 1
end
return 0
`;

function readFlag(reply: unknown): 0 | 1 | undefined {
	return reply === 0 || reply === 1 ? reply : undefined;
}

/** The node's key: a digest, so that no workflow or node id is stored in Redis. */
function nodeKey(node: string): string {
	return `${KEY_PREFIX}${createHash('sha256').update(node).digest('hex')}`;
}

/** One run's lease, renewed until it is released, lost, or the run outlives what it may hold. */
class RedisLease implements RunLease {
	private readonly lostController = new AbortController();

	private readonly released = new AbortController();

	constructor(
		private readonly store: SharedBucketStore,
		private readonly key: string,
		private readonly token: string,
		private readonly leaseMs: number,
		/** When (this process's clock) the run lets the node go even if it has not ended. */
		private readonly until: number,
		/** When the lease was last confirmed: the command that set it was sent then. */
		private confirmedAt: number,
		private readonly logger: Logger,
		/** Tells the lock Redis could not be asked, so that runs meanwhile leave it alone too. */
		private readonly failed: (reason: string) => void,
	) {
		void this.renewWhileHeld();
	}

	get lost(): AbortSignal {
		return this.lostController.signal;
	}

	async release(): Promise<void> {
		this.released.abort();
		if (this.lost.aborted) return;
		await this.store
			.run(RELEASE, [this.key], [this.token], readFlag)
			.catch((error: unknown) => this.failed((error as Error).message));
	}

	private async renewWhileHeld(): Promise<void> {
		for (;;) {
			try {
				await waitWith(sleep, this.leaseMs / RENEWALS_PER_LEASE, this.released.signal);
			} catch {
				return;
			}
			const sentAt = Date.now();
			const leaseMs = Math.min(this.leaseMs, this.until - sentAt);
			if (leaseMs <= 0) {
				this.lose('it has run past its time limit');
				return;
			}
			const renewed = await this.store
				.run(RENEW, [this.key], [this.token, String(Math.ceil(leaseMs))], readFlag)
				.then(
					(flag) => flag === 1,
					(error: unknown) => (error as Error).message,
				);
			if (typeof renewed === 'string') this.failed(renewed);
			if (this.released.signal.aborted) return;
			if (renewed === true) {
				this.confirmedAt = sentAt;
			} else if (renewed === false) {
				this.lose('its lease in Redis ran out or was taken over');
				return;
			} else if (Date.now() - this.confirmedAt >= this.leaseMs) {
				this.lose(`Redis could not renew its lease for longer than the lease lasts (${renewed})`);
				return;
			}
		}
	}

	private lose(why: string): void {
		this.logger.warn(
			`This run of the node no longer holds it across n8n processes (${why}): another run of it may start meanwhile`,
		);
		this.lostController.abort();
	}
}

/**
 * The runs kept apart in one Redis; while it cannot be asked, and for 5 s after it failed (to take
 * a node, or to renew or let go of a lease), each process keeps its own apart.
 */
export class RedisRunLock {
	/** Why the last attempt could not ask Redis; undefined while it answers. */
	private unavailable: string | undefined;

	private readonly backOff = new RedisBackOff();

	constructor(
		private readonly store: SharedBucketStore,
		private readonly leaseMs = LEASE_MS,
	) {}

	async take({
		node,
		holdMs,
		signal,
		logger,
	}: LeaseRequest): Promise<RunLease | 'busy' | undefined> {
		if (!this.backOff.due) return undefined;
		const key = nodeKey(node);
		const token = randomBytes(16).toString('hex');
		const sentAt = Date.now();
		const taking = this.store.ready(signal).then(async (ready) => {
			if (!ready) throw new RedisUnavailableError(this.store.problem);
			return await this.store.run(
				TAKE,
				[key],
				[token, String(Math.ceil(Math.min(this.leaseMs, holdMs)))],
				readFlag,
			);
		});
		const outcome = await unlessCancelled(taking, signal).then(
			(flag) => ({ taken: flag === 1 }),
			(error: unknown) => ({ error }),
		);
		if ('error' in outcome) {
			if (!signal?.aborted) {
				this.failed(logger, (outcome.error as Error).message);
				return undefined;
			}
			// The node may be taken after all: let it go at once rather than a lease later.
			void taking.then(
				async (flag) =>
					flag === 1 &&
					(await this.store.run(RELEASE, [key], [token], readFlag).catch(() => undefined)),
				() => undefined,
			);
			throw outcome.error;
		}
		if (this.unavailable !== undefined) {
			this.unavailable = undefined;
			logger.info(
				'Redis answers again: runs of a node are kept apart across all n8n processes again',
			);
		}
		if (!outcome.taken) return 'busy';
		return new RedisLease(
			this.store,
			key,
			token,
			this.leaseMs,
			sentAt + holdMs,
			sentAt,
			logger,
			(reason) => this.failed(logger, reason),
		);
	}

	/** Redis could not be asked, by a run taking the node or by a lease: all leave it alone awhile. */
	private failed(logger: Logger, reason: string): void {
		this.backOff.failed();
		this.cannotAsk(logger, reason);
	}

	private cannotAsk(logger: Logger, reason: string): void {
		const entering = this.unavailable === undefined;
		this.unavailable = reason;
		if (entering) {
			logger.warn(
				`Redis cannot be asked whether another n8n process runs the same node (${reason}). Until it answers, each n8n process keeps only its own runs of a node apart`,
			);
		}
	}
}

/** One lock per store: a store the registry replaced (e.g. its Redis password was edited) gets a new one. */
const locks = new WeakMap<SharedBucketStore, RedisRunLock>();

/** Notices about the queue's Redis this process has logged already: each once. */
const noticed = new Set<string>();

/**
 * Takes the node for one run in the Redis of n8n's queue mode, as the credential's Rate Limit
 * Sharing on Automatic finds it (whatever the credential says: the runs of a workflow are the n8n
 * instance's, not the account's). Outside queue mode there is nothing to ask: undefined.
 */
export function takeLeaseInQueueRedis(
	request: LeaseRequest,
): Promise<RunLease | 'busy' | undefined> | undefined {
	const { connection, notice } = sharingFor({ rateLimitSharing: 'automatic' });
	if (!connection) {
		if (notice && !noticed.has(notice)) {
			noticed.add(notice);
			request.logger.warn(
				`Each n8n process keeps only its own runs of a node apart, Redis cannot be used: ${notice}`,
			);
		}
		return undefined;
	}
	const store = storeFor(connection);
	let lock = locks.get(store);
	if (!lock) {
		lock = new RedisRunLock(store);
		locks.set(store, lock);
	}
	return lock.take(request);
}
