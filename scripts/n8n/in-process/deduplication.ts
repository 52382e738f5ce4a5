// n8n's deduplication store as n8n's own DeduplicationHelper (packages/cli/src/deduplication)
// keeps it, in the mode 'entries': per workflow and context ('' for the workflow, 'n:<node id>' for a
// node) one list of md5 hashes (base64), read and written whole on every call, oldest first,
// trimmed to maxEntries from the front. The rows live in this process, or, when
// N8N_HARNESS_DEDUPLICATION_FILE names a file, in that file (read and written on every call, as
// n8n reads and writes its database row), so that another process can read them back.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

import type {
	DeduplicationItemTypes,
	DeduplicationScope,
	ICheckProcessedContextData,
	ICheckProcessedOptions,
	IDataDeduplicator,
	IDeduplicationOutput,
} from 'n8n-workflow';

type Rows = Record<string, { mode: string; data: string[] }>;

const FILE_VARIABLE = 'N8N_HARNESS_DEDUPLICATION_FILE';

export class HarnessDeduplicator implements IDataDeduplicator {
	private rows: Rows = {};

	private load(): Rows {
		const file = process.env[FILE_VARIABLE];
		if (file) this.rows = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Rows) : {};
		return this.rows;
	}

	private save(): void {
		const file = process.env[FILE_VARIABLE];
		if (file) writeFileSync(file, JSON.stringify(this.rows));
	}

	private static key(scope: DeduplicationScope, contextData: ICheckProcessedContextData): string {
		if (scope === 'node' && !contextData.node) throw new Error("No node information has been provided and so cannot use scope 'node'");
		return `${contextData.workflow.id}|${scope === 'node' ? `n:${contextData.node?.id}` : ''}`;
	}

	private static hash(value: DeduplicationItemTypes): string {
		return createHash('md5').update(value.toString()).digest('base64');
	}

	private static assertEntries(options: ICheckProcessedOptions): void {
		if (options.mode !== 'entries') throw new Error(`The harness keeps only the mode 'entries', not '${options.mode}'`);
	}

	async checkProcessedAndRecord(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<IDeduplicationOutput> {
		HarnessDeduplicator.assertEntries(options);
		const rows = this.load();
		const key = HarnessDeduplicator.key(scope, contextData);
		const hashed = items.map(HarnessDeduplicator.hash);
		const row = rows[key];
		if (!row) {
			if (options.maxEntries) hashed.splice(0, hashed.length - options.maxEntries);
			rows[key] = { mode: options.mode, data: hashed };
			this.save();
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
		this.save();
		return result;
	}

	async removeProcessed(
		items: DeduplicationItemTypes[],
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<void> {
		HarnessDeduplicator.assertEntries(options);
		const row = this.load()[HarnessDeduplicator.key(scope, contextData)];
		if (!row) return;
		for (const hash of items.map(HarnessDeduplicator.hash)) {
			const index = row.data.indexOf(hash);
			if (index !== -1) row.data.splice(index, 1);
		}
		this.save();
	}

	async clearAllProcessedItems(scope: DeduplicationScope, contextData: ICheckProcessedContextData): Promise<void> {
		delete this.load()[HarnessDeduplicator.key(scope, contextData)];
		this.save();
	}

	async getProcessedDataCount(
		scope: DeduplicationScope,
		contextData: ICheckProcessedContextData,
		options: ICheckProcessedOptions,
	): Promise<number> {
		const row = this.load()[HarnessDeduplicator.key(scope, contextData)];
		return options.mode === 'entries' && row ? row.data.length : 0;
	}

	/** Every row's number of entries, by 'workflow id|context'. */
	sizes(): Record<string, number> {
		return Object.fromEntries(Object.entries(this.load()).map(([key, row]) => [key, row.data.length]));
	}

	forgetAll(): void {
		this.rows = {};
		this.save();
	}
}

export const deduplicator = new HarnessDeduplicator();
