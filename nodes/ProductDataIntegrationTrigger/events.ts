import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import type { SessionOutcome, SessionOutcomeOptions, SessionStatus } from '../shared/sessions';
import type { CustomerOverride } from '../shared/transport';
import type { UploadRecord } from './records';

/** What the trigger emits, as its settings ask, in the poll and in Fetch Test Event alike. */

export type StatusFilter = 'any' | 'succeeded' | 'failed';

export interface TriggerSettings {
	/** Emit an item for each upload when it first appears in a listing. */
	uploadReceived: boolean;
	/** Emit an item for each upload session when it has finished (and matches `status`). */
	uploadFinished: boolean;
	status: StatusFilter;
	includeErrorMessage: boolean;
	/** Status requests (GET .../result) one poll may send at most. */
	maxChecks: number;
	customer?: CustomerOverride;
}

/** An error message costs a request: it is fetched only where a failed session can be emitted. */
export function outcomeOptions(settings: TriggerSettings): SessionOutcomeOptions {
	return {
		includeErrorMessage: settings.includeErrorMessage && settings.status !== 'succeeded',
		customer: settings.customer,
	};
}

export function matches(filter: StatusFilter, status: SessionStatus): boolean {
	return filter === 'any' || filter === status;
}

export function receivedItem(record: UploadRecord): INodeExecutionData {
	return { json: { ...record, event: 'uploadReceived' } };
}

export function finishedItem(
	record: UploadRecord,
	outcome: SessionOutcome,
	includeErrorMessage: boolean,
): INodeExecutionData {
	const json: IDataObject = {
		...record,
		event: 'uploadFinished',
		status: outcome.status,
		errorUrl: outcome.errorUrl ?? null,
	};
	if (includeErrorMessage) {
		json.errorMessage = outcome.errorMessage ?? null;
		if (outcome.errorDocument !== undefined) json.errorDocument = outcome.errorDocument;
		if (outcome.errorText !== undefined) json.errorText = outcome.errorText;
	}
	if (outcome.warning !== undefined) json.warning = outcome.warning;
	return { json };
}
