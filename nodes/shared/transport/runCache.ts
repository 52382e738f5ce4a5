import type { ServiceContext } from './types';

// n8n creates the execute context per node run, so whatever is keyed by it lives exactly as long as
// the run: one cache for everything a node run reads once.
const runs = new WeakMap<object, Map<string, Promise<unknown>>>();

/**
 * The answer of `read` for this node run: the first call reads, later calls with the same key get
 * the same promise. A failed read is not kept, so each caller reports its own failure.
 */
export async function oncePerRun<T>(run: object, key: string, read: () => Promise<T>): Promise<T> {
	let reads = runs.get(run);
	if (!reads) {
		reads = new Map();
		runs.set(run, reads);
	}
	let answer = reads.get(key) as Promise<T> | undefined;
	if (!answer) {
		answer = read();
		reads.set(key, answer);
		const kept = reads;
		answer.catch(() => kept.delete(key));
	}
	return await answer;
}

/** A warning in the node's output, said once per node run however often it is met (a poll or a list in the editor has no output). */
export function hintOncePerRun(context: ServiceContext, message: string): void {
	if (!('addExecutionHints' in context)) return;
	void oncePerRun(context, `hint:${message}`, async () => {
		context.addExecutionHints({ message, type: 'warning', location: 'outputPane' });
	});
}
