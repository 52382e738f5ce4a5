// n8n's deduplication store as n8n's own DeduplicationHelper (packages/cli/src/deduplication)
// keeps it, in the mode 'entries': per workflow and context ('' for the workflow, 'n:<node id>' for a
// node) one list of md5 hashes (base64), oldest first, trimmed to maxEntries from the front; the
// rows live in this process. use(backend) hands every call to another store instead, e.g. n8n's own
// helper on its database (bench/catalogue-sync.ts).
import { createHash } from 'node:crypto';

import type {
	DeduplicationItemTypes,
	DeduplicationScope,
	ICheckProcessedContextData,
	ICheckProcessedOptions,
	IDataDeduplicator,
	IDeduplicationOutput,
} from 'n8n-workflow';

type Rows = Record<string, { mode: string; data: string[] }>;

class ProcessDeduplicator implements IDataDeduplicator {
	private rows: Rows = {};

	private static key(scope: DeduplicationScope, contextData: ICheckProcessedContextData): string {
		if (scope === 'node' && !contextData.node)
			throw new Error("No node information has been provided and so cannot use scope 'node'");
		return `${contextData.workflow.id}|${scope === 'node' ? `n:${contextData.node?.id}` : ''}`;
	}

	private static hash(value: DeduplicationItemTypes): string {
		return createHash('md5').update(value.toString()).digest('base64');
	}

	private static assertEntries(options: ICheckProcessedOptions): void {
		if (options.mode !== 'entries')
			throw new Error(`The harness keeps only the mode 'entries', not '${options.mode}'`);
	}

	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		ProcessDeduplicator.assertEntries(options);
		const rows = this.rows;
		const key = ProcessDeduplicator.key(scope, contextData);
		const hashed = items.map(ProcessDeduplicator.hash);
		const row = rows[key];
		if (!row) {
			if (options.maxEntries) hashed.splice(0, hashed.length - options.maxEntries);
			rows[key] = { mode: options.mode, data: hashed };
			return { new: items, processed: [] };
		}
		const known = new Set(row.data);
		const result: IDeduplicationOutput = { new: [], processed: [] };
		hashed.forEach((hash, index) => {
			if (known.has(hash)) {
				result.processed.push(items[index]);
			} else {
				result.new.push(items[index]);
				row.data.push(hash);
			}
		});
		if (options.maxEntries) row.data.splice(0, row.data.length - options.maxEntries);
		return result;
	}

	async removeProcessed(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<void> {
		ProcessDeduplicator.assertEntries(options);
		const row = this.rows[ProcessDeduplicator.key(scope, contextData)];
		if (!row) return;
		for (const hash of items.map(ProcessDeduplicator.hash)) {
			const index = row.data.indexOf(hash);
			if (index !== -1) row.data.splice(index, 1);
		}
	}

	async clearAllProcessedItems(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
	): Promise<void> {
		delete this.rows[ProcessDeduplicator.key(scope, contextData)];
	}

	async getProcessedDataCount(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<number> {
		const row = this.rows[ProcessDeduplicator.key(scope, contextData)];
		return options.mode === 'entries' && row ? row.data.length : 0;
	}

	/** Every row's number of entries, by 'workflow id|context'. */
	sizes(): Record<string, number> {
		return Object.fromEntries(
			Object.entries(this.rows).map(([key, row]) => [key, row.data.length]),
		);
	}
}

type StoreCall = keyof IDataDeduplicator;

/** The store the harness gives n8n-core: this process's rows, or the backend handed to use(). */
export class HarnessDeduplicator implements IDataDeduplicator {
	private readonly own = new ProcessDeduplicator();
	private backend: IDataDeduplicator = this.own;
	private failures: Array<{ call: StoreCall; after: number; times: number }> = [];

	use(backend: IDataDeduplicator): void {
		this.backend = backend;
	}

	/**
	 * Makes calls to `call` fail as a database that errs would: after `after` more calls of it that
	 * succeed, the next `times` (Infinity: until stopFailing) throw without touching the rows.
	 */
	failCalls(
		call: StoreCall,
		{ after = 0, times = 1 }: { after?: number; times?: number } = {},
	): void {
		this.failures.push({ call, after, times });
	}

	stopFailing(): void {
		this.failures = [];
	}

	private maybeFail(call: StoreCall): void {
		for (const failure of this.failures.filter((entry) => entry.call === call)) {
			if (failure.after > 0) {
				failure.after--;
			} else if (failure.times > 0) {
				failure.times--;
				throw new Error(`The deduplication store failed (${call})`);
			}
		}
	}

	/** Every row's number of entries in this process, by 'workflow id|context'. */
	sizes(): Record<string, number> {
		return this.own.sizes();
	}

	async checkProcessedAndRecord(
		...args: Parameters<IDataDeduplicator['checkProcessedAndRecord']>
	): Promise<IDeduplicationOutput> {
		this.maybeFail('checkProcessedAndRecord');
		return await this.backend.checkProcessedAndRecord(...args);
	}

	async removeProcessed(...args: Parameters<IDataDeduplicator['removeProcessed']>): Promise<void> {
		this.maybeFail('removeProcessed');
		await this.backend.removeProcessed(...args);
	}

	async clearAllProcessedItems(
		...args: Parameters<IDataDeduplicator['clearAllProcessedItems']>
	): Promise<void> {
		this.maybeFail('clearAllProcessedItems');
		await this.backend.clearAllProcessedItems(...args);
	}

	async getProcessedDataCount(
		...args: Parameters<IDataDeduplicator['getProcessedDataCount']>
	): Promise<number> {
		this.maybeFail('getProcessedDataCount');
		return await this.backend.getProcessedDataCount(...args);
	}
}

export const deduplicator = new HarnessDeduplicator();
