import { NodeOperationError, type INode, type IPollFunctions } from 'n8n-workflow';

import { wait } from '../wait';
import type { ServiceContext } from './context';
import { describeWait } from './responses';

/** Why a poll's requests were stopped: the poll outlived its time budget. */
export class PollDeadlineError extends Error {
	constructor(readonly budgetMs: number) {
		super(
			`The poll was stopped after ${describeWait(budgetMs)}, its time budget: the service or the request limit held it up. The next poll starts again from the last saved state.`,
		);
		this.name = 'PollDeadlineError';
	}
}

// A poll context lives as long as the trigger is active; the signal of the poll running on it now.
const pollSignals = new WeakMap<IPollFunctions, AbortSignal>();

/** The execution's cancel signal, or the deadline of the poll running on a trigger's context. */
export function cancelSignal(context: ServiceContext): AbortSignal | undefined {
	if ('getExecutionCancelSignal' in context) return context.getExecutionCancelSignal();
	return pollSignals.get(context as IPollFunctions);
}

/**
 * Runs one poll with a deadline: when `budgetMs` has passed, every request and wait of the poll
 * ends, so a poll that hangs never keeps the trigger from polling again. Says so in the n8n log.
 */
export async function withPollDeadline<T>(context: IPollFunctions, budgetMs: number, poll: () => Promise<T>): Promise<T> {
	const deadline = new AbortController();
	const timer = new AbortController();
	void wait(budgetMs, timer.signal).then(
		() => deadline.abort(new PollDeadlineError(budgetMs)),
		() => undefined,
	);
	pollSignals.set(context, deadline.signal);
	try {
		return await poll();
	} finally {
		timer.abort();
		pollSignals.delete(context);
		if (deadline.signal.aborted) context.logger.warn((deadline.signal.reason as Error).message);
	}
}

/**
 * What a node reports when its execution was cancelled (a notice, not a failure of the service),
 * or when a poll was stopped at its deadline (`reason`: the signal's).
 */
export function cancelledError(node: INode, itemIndex?: number, reason?: unknown): NodeOperationError {
	if (reason instanceof PollDeadlineError) {
		return new NodeOperationError(node, reason.message, { itemIndex, level: 'warning' });
	}
	return new NodeOperationError(node, 'The execution was cancelled', { itemIndex, level: 'info' });
}

/** Waits `ms`; a cancelled execution ends the wait at once, with the node's cancellation error. */
export async function sleepOrCancel(ms: number, signal: AbortSignal | undefined, node: INode, itemIndex?: number): Promise<void> {
	try {
		await wait(ms, signal);
	} catch {
		throw cancelledError(node, itemIndex, signal?.reason);
	}
}
