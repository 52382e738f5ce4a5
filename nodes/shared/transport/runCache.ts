import type { IExecuteFunctions, IPollFunctions } from 'n8n-workflow';

import { cancelSignal } from './cancel';
import type { ServiceContext } from './types';

/*
 * "Once per run": everything a node run (or a trigger's poll) does once, whoever asks.
 */

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

/** A trigger's poll: n8n keeps its context for as long as the trigger is active. */
function isPollContext(context: ServiceContext): context is IPollFunctions {
	return typeof (context as Partial<Pick<IPollFunctions, '__emit'>>).__emit === 'function';
}

/**
 * `read` once per node run, or once per poll of a trigger: n8n keeps one poll context for as long as
 * a trigger is active, and an answer kept with it would outlive an edited credential (password, Base
 * URL, customer, rate limit) until the workflow is activated again. Outside a poll with a deadline
 * (the trigger's manual test), every time.
 */
export async function oncePerNodeRun<T>(
	context: ServiceContext,
	key: string,
	read: () => Promise<T>,
): Promise<T> {
	if (!isPollContext(context)) return await oncePerRun(context, key, read);
	// Each poll has a deadline signal of its own (withPollDeadline): it stands for the poll.
	const poll = cancelSignal(context);
	return poll ? await oncePerRun(poll, key, read) : await read();
}

/**
 * A read whose answer is the same for many items of one node run is sent once: every request
 * costs a token of the account's rate limit. Each item gets its own copy (items must not share
 * objects that a later node may change), and a failed read is not kept, so each item reports its
 * own failure.
 */
export async function readOncePerRun<T>(
	context: IExecuteFunctions,
	key: string,
	read: () => Promise<T>,
): Promise<T> {
	return structuredClone(await oncePerRun(context, `read:${key}`, read));
}
