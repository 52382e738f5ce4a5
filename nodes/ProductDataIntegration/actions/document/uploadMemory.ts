import { ExecutionMemory, type NodeRun } from '../../../shared/executionMemory';

/**
 * What this process uploaded within each execution. n8n's "Retry On Fail" runs the node again with
 * all its items; a document that reached the service on an earlier try is answered from here
 * instead of being uploaded a second time, and one whose earlier try may or may not have reached
 * it is looked for before it is sent again.
 */

export interface RememberedUpload {
	sessionId: string;
	uploadedAt: string;
}

/** An upload whose answer never came: the service may or may not have it. */
export interface AmbiguousUpload {
	/** When the try began (this machine's clock). */
	sentAt: number;
	bytes: number;
}

export type Remembered = RememberedUpload | AmbiguousUpload;

/** Keyed by the document's position among the node's documents, its hash, the route and the customer. */
export const uploadedDocuments = new ExecutionMemory<Remembered>();

export function isAmbiguousUpload(value: Remembered | undefined): value is AmbiguousUpload {
	return value !== undefined && 'sentAt' in value;
}

/** The session IDs this node got in this execution, on any try. */
export function sessionsOf(run: NodeRun): Set<string> {
	const sessions = new Set<string>();
	for (const value of uploadedDocuments.valuesOf(run))
		if (!isAmbiguousUpload(value)) sessions.add(value.sessionId);
	return sessions;
}
