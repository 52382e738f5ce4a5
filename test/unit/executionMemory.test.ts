import { ExecutionMemory, type NodeRun } from '../../nodes/shared/executionMemory';

function run(executionId: string, name: string): NodeRun {
	return { getExecutionId: () => executionId, getNode: () => ({ name }) };
}

describe('the memory of what an execution sent (Retry On Fail)', () => {
	it("keeps each node run's entries apart, also of nodes whose names begin alike", () => {
		const memory = new ExecutionMemory<string>();
		memory.remember(run('7', 'Upload'), [0, 'abc'], 'first');
		memory.remember(run('7', 'Upload 2'), [0, 'abc'], 'second');
		memory.remember(run('8', 'Upload'), [0, 'abc'], 'other execution');

		expect(memory.recall(run('7', 'Upload'), [0, 'abc'])).toBe('first');
		expect(memory.recall(run('7', 'Upload'), [1, 'abc'])).toBeUndefined();
		expect([...memory.valuesOf(run('7', 'Upload'))]).toEqual(['first']);
		expect([...memory.valuesOf(run('7', 'Upload 2'))]).toEqual(['second']);
	});

	it('forgets entries after their time and beyond its cap, oldest first', () => {
		const memory = new ExecutionMemory<number>(1000, 2);
		const node = run('1', 'Upload');
		memory.remember(node, ['a'], 1, 0);
		memory.remember(node, ['b'], 2, 10);
		memory.remember(node, ['c'], 3, 20);
		expect(memory.recall(node, ['a'], 30)).toBeUndefined();
		expect(memory.recall(node, ['b'], 30)).toBe(2);
		expect(memory.recall(node, ['c'], 1020)).toBeUndefined();
	});

	it('hands out copies: a caller changing what it got changes nothing remembered', () => {
		const memory = new ExecutionMemory<{ sessionId: string }>();
		const node = run('1', 'Upload');
		memory.remember(node, [0], { sessionId: 'a' });
		memory.recall(node, [0])!.sessionId = 'changed';
		expect(memory.recall(node, [0])).toEqual({ sessionId: 'a' });
	});
});
