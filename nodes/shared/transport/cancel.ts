import {
	NodeOperationError,
	type ILoadOptionsFunctions,
	type INode,
	type IPollFunctions,
} from 'n8n-workflow';

import { describeWait } from '../throttle';
import type { ServiceContext } from './types';
import { wait } from './wait';

/** Why the requests of a poll, or of a list in the editor, were stopped: they outlived their time budget. */
class DeadlineError extends Error {
	constructor(
		message: string,
		readonly budgetMs: number,
	) {
		super(message);
		this.name = 'DeadlineError';
	}
}

/** A context without an execution: a trigger's poll, or a list the editor asks for. */
type RunContext = IPollFunctions | ILoadOptionsFunctions;

// A poll context lives as long as the trigger is active; the signal of the poll or list running on
// a context now.
const deadlineSignals = new WeakMap<RunContext, AbortSignal>();

/** The execution's cancel signal, or the deadline of the poll or list running on the context. */
export function cancelSignal(context: ServiceContext): AbortSignal | undefined {
	if ('getExecutionCancelSignal' in context) return context.getExecutionCancelSignal();
	return deadlineSignals.get(context);
}

/**
 * Runs `run` with a deadline: when its budget has passed, every request and wait of it ends with
 * `stop`, which the n8n log tells.
 */
async function withDeadline<T>(
	context: RunContext,
	stop: DeadlineError,
	run: () => Promise<T>,
): Promise<T> {
	const deadline = new AbortController();
	const timer = new AbortController();
	void wait(stop.budgetMs, timer.signal).then(
		() => deadline.abort(stop),
		() => undefined,
	);
	deadlineSignals.set(context, deadline.signal);
	try {
		return await run();
	} finally {
		timer.abort();
		deadlineSignals.delete(context);
		if (deadline.signal.aborted) context.logger.warn(stop.message);
	}
}

/** Runs one poll with a deadline, so a poll that hangs never keeps the trigger from polling again. */
export async function withPollDeadline<T>(
	context: IPollFunctions,
	budgetMs: number,
	poll: () => Promise<T>,
): Promise<T> {
	const stop = new DeadlineError(
		`The poll was stopped after ${describeWait(budgetMs)}, its time budget: the service or the request limit held it up. The next poll starts again from the last saved state.`,
		budgetMs,
	);
	return await withDeadline(context, stop, poll);
}

/** Runs the requests of a list in the editor (`what`, e.g. "customer nodes") with a deadline. */
export async function withListDeadline<T>(
	context: ILoadOptionsFunctions,
	what: string,
	budgetMs: number,
	list: () => Promise<T>,
): Promise<T> {
	const stop = new DeadlineError(
		`The list of ${what} was not loaded within ${describeWait(budgetMs)} (the credential's Request Timeout): the service or the request limit held it up. Try again later.`,
		budgetMs,
	);
	return await withDeadline(context, stop, list);
}

/**
 * What a node reports when its execution was cancelled (a notice, not a failure of the service),
 * or when a poll or list was stopped at its deadline (`reason`: the signal's).
 */
export function cancelledError(
	node: INode,
	itemIndex?: number,
	reason?: unknown,
): NodeOperationError {
	if (reason instanceof DeadlineError) {
		return new NodeOperationError(node, reason.message, { itemIndex, level: 'warning' });
	}
	return new NodeOperationError(node, 'The execution was cancelled', { itemIndex, level: 'info' });
}

/** Waits `ms`; a cancelled execution ends the wait at once, with the node's cancellation error. */
export async function sleepOrCancel(
	ms: number,
	signal: AbortSignal | undefined,
	node: INode,
	itemIndex?: number,
): Promise<void> {
	try {
		await wait(ms, signal);
	} catch {
		throw cancelledError(node, itemIndex, signal?.reason);
	}
}
