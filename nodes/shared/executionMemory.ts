/** The node run an entry belongs to: one node in one execution, however often Retry On Fail runs it. */
export interface NodeRun {
	getExecutionId(): string;
	getNode(): { name: string };
}

/**
 * What this process sent within each execution, kept for n8n's "Retry On Fail": it runs the node
 * again with all its items, in the same process, and what reached the service on an earlier try
 * must not be sent again. An entry is the node run's and a key of the caller's (e.g. a document's
 * position and hash); entries expire long after any retry loop, and there is a cap.
 */
export class ExecutionMemory<T> {
	private readonly entries = new Map<string, { value: T; expiresAt: number }>();

	constructor(
		private readonly ttlMs = 6 * 60 * 60 * 1000,
		// A night's catalogue sync remembers one entry per image: room for 100,000 of them.
		private readonly maxEntries = 100_000,
	) {}

	recall(run: NodeRun, key: readonly unknown[], now = Date.now()): T | undefined {
		const entryKey = this.keyOf(run, key);
		const entry = this.entries.get(entryKey);
		if (!entry) return undefined;
		if (entry.expiresAt <= now) {
			this.entries.delete(entryKey);
			return undefined;
		}
		return structuredClone(entry.value);
	}

	remember(run: NodeRun, key: readonly unknown[], value: T, now = Date.now()): void {
		const entryKey = this.keyOf(run, key);
		this.entries.delete(entryKey);
		this.entries.set(entryKey, { value: structuredClone(value), expiresAt: now + this.ttlMs });
		// A Map iterates in insertion order: the first entries are the oldest.
		for (const [oldKey, entry] of this.entries) {
			if (this.entries.size <= this.maxEntries && entry.expiresAt > now) break;
			this.entries.delete(oldKey);
		}
	}

	/** Every value the node run remembered, on any try. */
	*valuesOf(run: NodeRun): IterableIterator<T> {
		// The run's own entries are the keys that begin as its key with nothing after it does.
		const prefix = `${this.keyOf(run, []).slice(0, -1)},`;
		for (const [key, { value }] of this.entries) if (key.startsWith(prefix)) yield value;
	}

	private keyOf(run: NodeRun, key: readonly unknown[]): string {
		return JSON.stringify([run.getExecutionId(), run.getNode().name, ...key]);
	}
}
