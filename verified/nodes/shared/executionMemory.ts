/**
 * What this process did within each execution, kept for n8n's "Retry On Fail": it runs the node
 * again with all its items, in the same process, and what reached the service on an earlier try
 * must not be sent again. Entries expire long after any retry loop, and there is a cap.
 */
export class ExecutionMemory<T> {
	private readonly entries = new Map<string, { value: T; expiresAt: number }>();

	constructor(
		private readonly ttlMs = 6 * 60 * 60 * 1000,
		private readonly maxEntries = 10_000,
	) {}

	recall(key: string, now = Date.now()): T | undefined {
		const entry = this.entries.get(key);
		if (!entry) return undefined;
		if (entry.expiresAt <= now) {
			this.entries.delete(key);
			return undefined;
		}
		return structuredClone(entry.value);
	}

	remember(key: string, value: T, now = Date.now()): void {
		this.entries.delete(key);
		this.entries.set(key, { value: structuredClone(value), expiresAt: now + this.ttlMs });
		// A Map iterates in insertion order: the first entries are the oldest.
		for (const [oldKey, entry] of this.entries) {
			if (this.entries.size <= this.maxEntries && entry.expiresAt > now) break;
			this.entries.delete(oldKey);
		}
	}

	/** Every value still held, with its key. */
	*values(): IterableIterator<[string, T]> {
		for (const [key, { value }] of this.entries) yield [key, value];
	}
}
