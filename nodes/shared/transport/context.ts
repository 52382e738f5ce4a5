import type { IPollFunctions } from 'n8n-workflow';

import { cancelSignal } from './cancel';
import { oncePerRun } from './runCache';
import type { ServiceContext } from './types';

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
