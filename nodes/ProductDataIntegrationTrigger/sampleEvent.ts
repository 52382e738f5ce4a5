import type { INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { getSessionOutcome } from '../shared/sessions';
import type { CustomerOverride } from '../shared/transport';
import { getServiceTimeZone, listUploads, serviceDay } from '../shared/uploads';
import type { StatusFilter, TriggerSettings } from './events';
import { finishedItem, matches, outcomeOptions, receivedItem } from './events';
import type { UploadRecord } from './records';
import { followableRecords, reportsErrors } from './records';
import { DAY_MS } from '../shared/time';

const NOTHING_FINISHED_MESSAGE =
	'No finished upload session found today or yesterday - upload a document and try again';
const NOTHING_RECEIVED_MESSAGE =
	'No upload found today or yesterday - upload a document and try again';

/**
 * "Fetch Test Event": the most recent upload that fits the settings, found without touching the
 * trigger's state. Finished sessions are looked for newest first, today then yesterday, within the
 * per-poll limit of status checks.
 */
export async function sampleEvent(
	context: IPollFunctions,
	settings: TriggerSettings,
): Promise<INodeExecutionData[][]> {
	const now = Date.now();
	const timeZone = await getServiceTimeZone(context);
	let checks = 0;
	for (const day of [serviceDay(now, timeZone), serviceDay(now - DAY_MS, timeZone)]) {
		if (settings.uploadFinished && checks >= settings.maxChecks) break;
		const newestFirst = (await listDay(context, day, settings.customer)).reverse();
		if (!settings.uploadFinished) {
			if (newestFirst.length > 0) return [[receivedItem(newestFirst[0])]];
			continue;
		}
		for (const record of sampleOrder(newestFirst, settings.status)) {
			if (checks >= settings.maxChecks) break;
			checks++;
			const outcome = await getSessionOutcome(context, record.id, outcomeOptions(settings));
			if (outcome.status !== 'processing' && matches(settings.status, outcome.status)) {
				return [[finishedItem(record, outcome, settings.includeErrorMessage)]];
			}
		}
	}
	if (!settings.uploadFinished)
		throw new NodeOperationError(context.getNode(), NOTHING_RECEIVED_MESSAGE);
	throw new NodeOperationError(context.getNode(), NOTHING_FINISHED_MESSAGE, {
		description:
			checks >= settings.maxChecks
				? `The ${checks} most recent uploads were checked (the limit of Max Status Checks per Poll)`
				: undefined,
	});
}

/** Records that report errors are failed ones: looked at first when failures are wanted, last otherwise. */
function sampleOrder(newestFirst: UploadRecord[], status: StatusFilter): UploadRecord[] {
	if (status === 'any') return newestFirst;
	const failing = newestFirst.filter(reportsErrors);
	const others = newestFirst.filter((record) => !reportsErrors(record));
	return status === 'failed' ? [...failing, ...others] : [...others, ...failing];
}

async function listDay(
	context: IPollFunctions,
	day: string,
	customer: CustomerOverride | undefined,
): Promise<UploadRecord[]> {
	return followableRecords(await listUploads(context, day, { customer })).records;
}
