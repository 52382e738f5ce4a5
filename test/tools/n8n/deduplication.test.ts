import { HarnessDeduplicator } from '../../../scripts/n8n/in-process/deduplication';

// n8n's DeduplicationHelper (packages/cli/src/deduplication, mode 'entries') as the harness keeps it.
describe("the in-process harness's deduplication store", () => {
	const node = { workflow: { id: 'workflow', active: false }, node: { id: 'node-a' } as never };
	const otherNode = {
		workflow: { id: 'workflow', active: false },
		node: { id: 'node-b' } as never,
	};
	const entries = { mode: 'entries' as const };

	it('records what a check did not find, and finds it next time', async () => {
		const store = new HarnessDeduplicator();
		expect(await store.checkProcessedAndRecord(['a', 'b'], 'node', node, entries)).toEqual({
			new: ['a', 'b'],
			processed: [],
		});
		expect(await store.checkProcessedAndRecord(['b', 'c'], 'node', node, entries)).toEqual({
			new: ['c'],
			processed: ['b'],
		});
		expect(await store.getProcessedDataCount('node', node, entries)).toBe(3);
		expect(await store.getProcessedDataCount('node', otherNode, entries)).toBe(0);
		expect(store.sizes()).toEqual({ 'workflow|n:node-a': 3 });
	});

	it('keeps at most maxEntries, dropping the oldest', async () => {
		const store = new HarnessDeduplicator();
		await store.checkProcessedAndRecord(['a', 'b', 'c'], 'node', node, {
			mode: 'entries',
			maxEntries: 2,
		});
		await store.checkProcessedAndRecord(['d'], 'node', node, { mode: 'entries', maxEntries: 2 });
		expect(await store.checkProcessedAndRecord(['b', 'c', 'd'], 'node', node, entries)).toEqual({
			new: ['b'],
			processed: ['c', 'd'],
		});
	});

	it('removes values and clears a node', async () => {
		const store = new HarnessDeduplicator();
		await store.checkProcessedAndRecord(['a', 'b'], 'node', node, entries);
		await store.removeProcessed(['a'], 'node', node, entries);
		expect(await store.getProcessedDataCount('node', node, entries)).toBe(1);
		await store.clearAllProcessedItems('node', node, entries);
		expect(await store.getProcessedDataCount('node', node, entries)).toBe(0);
	});
});
