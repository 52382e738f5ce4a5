import { NodeOperationError, type INode } from 'n8n-workflow';

import { wait } from '../wait';
import type { ServiceContext } from './context';

/** The execution's cancel signal; a trigger's poll and a list in the editor have none. */
export function cancelSignal(context: ServiceContext): AbortSignal | undefined {
	return 'getExecutionCancelSignal' in context ? context.getExecutionCancelSignal() : undefined;
}

/** What a node reports when its execution was cancelled: a notice, not a failure of the service. */
export function cancelledError(node: INode, itemIndex?: number): NodeOperationError {
	return new NodeOperationError(node, 'The execution was cancelled', { itemIndex, level: 'info' });
}

/** Waits `ms`; a cancelled execution ends the wait at once, with the node's cancellation error. */
export async function sleepOrCancel(ms: number, signal: AbortSignal | undefined, node: INode, itemIndex?: number): Promise<void> {
	try {
		await wait(ms, signal);
	} catch {
		throw cancelledError(node, itemIndex);
	}
}
