import type { IExecuteFunctions } from 'n8n-workflow';

import { oncePerRun } from '../../shared/transport/runCache';

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
