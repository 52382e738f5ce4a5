import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { DEFAULT_WAIT_TIMEOUT_SECONDS } from '../../shared/descriptions';
import type { SessionOutcome, SessionToAwait } from '../../shared/sessions';
import type { CustomerOverride } from '../../shared/transport';

/** The options of an item that say how its sessions are awaited. */
export interface WaitOptions {
	timeout?: unknown;
	includeErrorMessage?: boolean;
}

/**
 * The Timeout (Seconds) option of an item, in milliseconds. Checked before any request: n8n hands
 * an expression's text to a number field as it is, and a wait without a deadline would poll for as
 * long as an upload stays in the queue.
 */
function getWaitTimeoutMs(context: IExecuteFunctions, itemIndex: number, timeout: unknown): number {
	if (timeout === undefined || timeout === null || timeout === '')
		return DEFAULT_WAIT_TIMEOUT_SECONDS * 1000;
	const seconds = typeof timeout === 'string' ? Number(timeout.trim()) : timeout;
	if (typeof seconds !== 'number' || !Number.isFinite(seconds)) {
		throw new NodeOperationError(
			context.getNode(),
			`The Timeout (Seconds) of item ${itemIndex} is not a number of seconds: "${String(timeout)}"`,
			{
				itemIndex,
				description: 'Give how many seconds to wait, e.g. 300. 0 checks each upload once.',
			},
		);
	}
	return Math.max(0, seconds) * 1000;
}

/** How the sessions of an item are awaited. */
export type WaitSettings = Omit<SessionToAwait, 'sessionId'>;

/**
 * How the sessions of an item are awaited, from the item's Options (read once by the caller) and
 * its customer node. Checked before any request.
 */
export function waitSettings(
	context: IExecuteFunctions,
	itemIndex: number,
	options: WaitOptions,
	customer: CustomerOverride | undefined,
): WaitSettings {
	return {
		itemIndex,
		customer,
		includeErrorMessage: options.includeErrorMessage === true,
		timeoutMs: getWaitTimeoutMs(context, itemIndex, options.timeout),
	};
}

/** An outcome after a wait: a session still processing when the timeout passed says so. */
export function waitedOutcome(outcome: SessionOutcome): IDataObject {
	return outcome.status === 'processing' ? { ...outcome, timedOut: true } : { ...outcome };
}
