/**
 * What this process uploaded within each execution. n8n's "Retry On Fail" runs the node again with
 * all its items; a document that reached the service on an earlier try is answered from here
 * instead of being uploaded a second time.
 */

export interface RememberedUpload {
	sessionId: string;
	uploadedAt: string;
}

interface Entry extends RememberedUpload {
	expiresAt: number;
}

/** Far longer than any retry loop of one execution, short enough not to pile up. */
const TTL_MS = 6 * 60 * 60 * 1000;
const MAX_ENTRIES = 10_000;

const entries = new Map<string, Entry>();

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

export function recallUpload(key: string, now = Date.now()): RememberedUpload | undefined {
	const entry = entries.get(key);
	if (!entry) return undefined;
	if (entry.expiresAt <= now) {
		entries.delete(key);
		return undefined;
	}
	return { sessionId: entry.sessionId, uploadedAt: entry.uploadedAt };
}

export function rememberUpload(key: string, upload: RememberedUpload, now = Date.now()): void {
	entries.delete(key);
	entries.set(key, { ...upload, expiresAt: now + TTL_MS });
	// A Map iterates in insertion order: the first entries are the oldest.
	for (const [oldKey, entry] of entries) {
		if (entries.size <= MAX_ENTRIES && entry.expiresAt > now) break;
		entries.delete(oldKey);
	}
}
