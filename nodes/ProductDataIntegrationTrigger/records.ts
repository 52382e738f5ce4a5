import type { IDataObject } from 'n8n-workflow';

import { normalizeSessionId } from '../shared/sessions';
import { receivedAtMs } from '../shared/uploads';

/**
 * The service's records as the trigger reads them: an entry of a date's listing
 * (GET /api/xml/{yyyy-MM-dd}) is followed only when its id is a session id.
 */

/** One uploaded-file record as the list-by-date operation returns it, with its session id. */
export interface UploadRecord extends IDataObject {
	id: string;
}

/** The session id of a listed record, or undefined when its id is not one (see normalizeSessionId). */
function sessionIdOf(record: IDataObject): string | undefined {
	return normalizeSessionId(record.id);
}

/**
 * The records of a date's listing that the trigger can follow (those whose id is a session id,
 * normalized), oldest first, and the ids of those it cannot.
 */
export function followableRecords(listing: IDataObject[]): {
	records: UploadRecord[];
	skippedIds: unknown[];
} {
	const records: UploadRecord[] = [];
	const skippedIds: unknown[] = [];
	for (const record of listing) {
		const id = sessionIdOf(record);
		if (id === undefined) skippedIds.push(record.id);
		else records.push({ ...record, id });
	}
	const ordered = records
		.map((record, index) => ({ record, index, at: receivedAtMs(record) }))
		.sort((a, b) => (a.at ?? 0) - (b.at ?? 0) || a.index - b.index)
		.map(({ record }) => record);
	return { records: ordered, skippedIds };
}

/** Whether the record itself already reports errors: a hint that checking it will find it finished. */
export function reportsErrors(record: IDataObject): boolean {
	return Array.isArray(record.errors) && record.errors.length > 0;
}
