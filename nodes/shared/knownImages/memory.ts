import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { edition, type KnownImages } from '../ports';
import { customerScope, holderOf, type CustomerOverride } from '../transport';

export type { KnownImages } from '../ports';

/** Entries in this process for all accounts together; beyond it the oldest are dropped. */
export const PROCESS_MAX_ENTRIES = 100_000;

/** Entries looked at for expiry per write, oldest written first. */
const PRUNED_PER_WRITE = 1000;

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

	/** An entry's expiry only grows: a writer with a short age never cuts what others remembered for longer. */
	async remember(entries: Array<{ md5: string; hashcode: string }>): Promise<void> {
		const now = this.now();
		const expiresAt = now + this.ageMs;
		for (const { md5, hashcode } of entries) {
			const key = `${this.scope}\n${md5}`;
			const kept = processEntries.get(key)?.expiresAt ?? 0;
			processEntries.delete(key);
			processEntries.set(key, { hashcode, expiresAt: Math.max(kept, expiresAt) });
		}
		for (const key of processEntries.keys()) {
			if (processEntries.size <= PROCESS_MAX_ENTRIES) break;
			processEntries.delete(key);
		}
		// A memory that keeps being written does not keep what expired: the oldest written, a slice per write.
		let looked = 0;
		for (const [key, entry] of processEntries) {
			if (looked++ >= PRUNED_PER_WRITE) break;
			if (entry.expiresAt <= now) processEntries.delete(key);
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

/**
 * The known images of the credential's account and customer node (or `customer`) in the Redis the
 * account shares its rate limit through (the full edition), or in this process when there is none; when Redis
 * cannot be asked, this process's memory stands in (and `unavailable` says why, once).
 */
export class KnownImagesWithFallback implements KnownImages {
	private readonly local: ProcessKnownImages;

	private readonly redis: KnownImages | undefined;

	private failed = false;

	/** `unavailable`: told once why Redis could not be asked. */
	constructor(
		credentials: ICredentialDataDecryptedObject,
		customer: CustomerOverride | undefined,
		ageMs: number,
		private readonly unavailable: (reason: string) => void,
	) {
		const scope = customerScope(credentials, customer);
		this.local = new ProcessKnownImages(scope, ageMs);
		this.redis = edition().sharedKnownImages(credentials, holderOf(credentials), scope, ageMs);
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
