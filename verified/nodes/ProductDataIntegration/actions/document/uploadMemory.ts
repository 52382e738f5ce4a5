import { ExecutionMemory } from '../../../shared/executionMemory';

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

type Remembered = RememberedUpload | AmbiguousUpload;

const memory = new ExecutionMemory<Remembered>();

export interface UploadKeyParts {
	executionId: string;
	nodeName: string;
	/** Position of the document among the node's documents in this run. */
	position: number;
	sha256: string;
	endpoint: string;
	customer: string;
}

export function uploadKey(parts: UploadKeyParts): string {
	return JSON.stringify([
		parts.executionId,
		parts.nodeName,
		parts.position,
		parts.sha256,
		parts.endpoint,
		parts.customer,
	]);
}

export function isAmbiguousUpload(value: Remembered | undefined): value is AmbiguousUpload {
	return value !== undefined && 'sentAt' in value;
}

export function recallUpload(key: string, now = Date.now()): Remembered | undefined {
	return memory.recall(key, now);
}

export function rememberUpload(key: string, value: Remembered, now = Date.now()): void {
	memory.remember(key, value, now);
}

/** The session IDs this node got in this execution, on any try. */
export function sessionsOf(executionId: string, nodeName: string): Set<string> {
	const sessions = new Set<string>();
	for (const [key, value] of memory.values()) {
		const [execution, node] = JSON.parse(key) as [string, string];
		if (execution === executionId && node === nodeName && !isAmbiguousUpload(value)) sessions.add(value.sessionId);
	}
	return sessions;
}
