import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { MAX_ANSWER_AGE_MS, type AnswerHome, type KeptAnswer } from '../ports';
import type { RedisConnection, SharedBucketStore } from './bucketStore';
import { RedisBackOff } from './redisBackOff';
import { storeFor } from './sharedRegistry';
import { sharingFor } from './sharing';

/*
 * The answers the pollers of an account share (see ../sharedAnswers.ts and ../ports/answers.ts) in Redis, full edition
 * only, on the connection the account's rate limit uses (see sharedRegistry.ts). Each
 * answer is one key that expires when no poller may take it any more (at most a minute), so
 * what Redis holds for them is bounded by the answers of the last minute.
 */

const KEY_PREFIX = 'n8n-nodes-product-data-integration:answers:';

// KEYS: the answer. Answers it, or '' when there is none.
const READ = `return redis.call('GET', KEYS[1]) or ''`;

// KEYS: the answer. ARGV: the answer, its lifetime (ms).
const WRITE = `redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 0`;

function readKept(reply: unknown): KeptAnswer | null | undefined {
	if (typeof reply !== 'string') return undefined;
	if (reply === '') return null;
	try {
		const { json, askedAt, maxAgeMs, askedBy } = JSON.parse(reply) as Partial<KeptAnswer>;
		if (
			typeof json === 'string' &&
			typeof askedBy === 'string' &&
			Number.isFinite(askedAt) &&
			Number.isFinite(maxAgeMs)
		)
			return { json, askedAt: askedAt as number, maxAgeMs: maxAgeMs as number, askedBy };
	} catch {
		// Not what WRITE stores: taken as no answer.
	}
	return null;
}

/**
 * After Redis could not be asked, answers are not looked for there for a while (per connection),
 * as the rate limit waits before it tries Redis again: a poll does not wait for a Redis that is
 * away at every answer.
 */
const backOffs = new WeakMap<SharedBucketStore, RedisBackOff>();

export class RedisAnswers implements AnswerHome {
	private readonly store: SharedBucketStore;

	private readonly backOff: RedisBackOff;

	constructor(connection: RedisConnection) {
		this.store = storeFor(connection);
		let backOff = backOffs.get(this.store);
		if (!backOff) {
			backOff = new RedisBackOff();
			backOffs.set(this.store, backOff);
		}
		this.backOff = backOff;
	}

	async read(key: string): Promise<KeptAnswer | undefined> {
		const kept = await this.unlessAway(
			async () => await this.store.run(READ, [`${KEY_PREFIX}${key}`], [], readKept),
		);
		return kept ?? undefined;
	}

	async write(key: string, answer: KeptAnswer): Promise<void> {
		const lifetimeMs = Math.max(1, Math.ceil(Math.min(MAX_ANSWER_AGE_MS, answer.maxAgeMs)));
		await this.unlessAway(
			async () =>
				await this.store.run(
					WRITE,
					[`${KEY_PREFIX}${key}`],
					[JSON.stringify(answer), String(lifetimeMs)],
					(reply) => (reply === 0 ? reply : undefined),
				),
		);
	}

	/** Runs `command`, or nothing (undefined) while Redis counts as away after a failure. */
	private async unlessAway<T>(command: () => Promise<T>): Promise<T | undefined> {
		if (!this.backOff.due) return undefined;
		return await command().catch(async (error: Error) => {
			this.backOff.failed();
			return await Promise.reject(error);
		});
	}
}

/** The pollers' answers in the Redis the account shares its rate limit through, where it has one. */
export function answersInRedis(
	credentials: ICredentialDataDecryptedObject,
): AnswerHome | undefined {
	const { connection } = sharingFor(credentials);
	return connection ? new RedisAnswers(connection) : undefined;
}
