import type {
	IDataObject,
	IExecuteFunctions,
	INodeProperties,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { SessionOutcome } from '../../shared/sessions';
import { oncePerRun } from '../../shared/runCache';
import type { CustomerOverride } from '../../shared/transport';

/**
 * Goes into the "Options" collection of every operation (and of the trigger) whose requests name a
 * customer node: the credential's customer is the default, this picks another node of the account.
 */
export const customerOption: INodeProperties = {
	displayName: 'Customer Name or ID',
	name: 'customer',
	type: 'options',
	typeOptions: { loadOptionsMethod: 'getCustomers' },
	default: '',
	description:
		'Customer node to act on instead of the one in the credential, by service ID. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
};

/** For every operation (and the trigger) that reports how an upload's processing ended. */
export const includeErrorMessageOption: INodeProperties = {
	displayName: 'Include Error Message',
	name: 'includeErrorMessage',
	type: 'boolean',
	default: false,
	description:
		'Whether to fetch the error message of an upload whose processing failed into errorMessage (one more request each), instead of giving only its URL',
};

const DEFAULT_WAIT_TIMEOUT_SECONDS = 300;

/** For the operations that wait for uploads to be processed. */
export const waitTimeoutOption: INodeProperties = {
	displayName: 'Timeout (Seconds)',
	name: 'timeout',
	type: 'number',
	typeOptions: { minValue: 0 },
	default: DEFAULT_WAIT_TIMEOUT_SECONDS,
	description:
		'How long to wait for all uploads of the run together. Those still in the queue then come out with the status processing and timedOut true.',
};

/** The customer node the Options of an item (or of the trigger) pick, if not the credential's. */
export function getCustomerOverride(
	this: IExecuteFunctions | IPollFunctions,
	itemIndex = 0,
): CustomerOverride | undefined {
	// A trigger has no input items: its parameters are read without an item index.
	const options = (
		'getInputData' in this
			? this.getNodeParameter('options', itemIndex, {})
			: this.getNodeParameter('options', {})
	) as IDataObject;
	const customer = String(options.customer ?? '').trim();
	return customer === '' ? undefined : { customerId: customer, customerIdType: 'ServiceID' };
}

/**
 * The Timeout (Seconds) option of an item, in milliseconds. Checked before any request: n8n hands
 * an expression's text to a number field as it is, and a wait without a deadline would poll for as
 * long as an upload stays in the queue.
 */
export function getWaitTimeoutMs(this: IExecuteFunctions, itemIndex: number): number {
	const { timeout } = this.getNodeParameter('options', itemIndex, {}) as { timeout?: unknown };
	if (timeout === undefined || timeout === null || timeout === '') return DEFAULT_WAIT_TIMEOUT_SECONDS * 1000;
	const seconds = typeof timeout === 'string' ? Number(timeout.trim()) : timeout;
	if (typeof seconds !== 'number' || !Number.isFinite(seconds)) {
		throw new NodeOperationError(
			this.getNode(),
			`The Timeout (Seconds) of item ${itemIndex} is not a number of seconds: "${String(timeout)}"`,
			{ itemIndex, description: 'Give how many seconds to wait, e.g. 300. 0 checks each upload once.' },
		);
	}
	return Math.max(0, seconds) * 1000;
}

/** An outcome after a wait: a session still processing when the timeout passed says so. */
export function waitedOutcome(outcome: SessionOutcome): IDataObject {
	return outcome.status === 'processing' ? { ...outcome, timedOut: true } : { ...outcome };
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
