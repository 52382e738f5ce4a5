import type { IDataObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	cleanServiceText,
	getServiceCredentials,
	serviceRequest,
	type CustomerOverride,
	type ServiceContext,
} from './transport';

/**
 * The time zone the service dates uploads in when the credential does not say: the spec's
 * timestamps carry offsets but the list-by-date route names a bare date, and the emulator dates in UTC.
 */
export const DEFAULT_SERVICE_TIME_ZONE = 'UTC';

/**
 * The credential's Service Time Zone, checked before any request: Get Many and the trigger both
 * name the service's days in it.
 */
export async function getServiceTimeZone(
	context: ServiceContext,
	itemIndex?: number,
): Promise<string> {
	const credentials = await getServiceCredentials(context, itemIndex);
	const timeZone = String(credentials.serviceTimeZone ?? '').trim() || DEFAULT_SERVICE_TIME_ZONE;
	try {
		serviceDay(0, timeZone);
	} catch {
		throw new NodeOperationError(
			context.getNode(),
			`The credential's Service Time Zone is not a time zone: "${timeZone}"`,
			{
				itemIndex,
				description: 'Give an IANA time zone name, e.g. Europe/Berlin, or UTC',
			},
		);
	}
	return timeZone;
}

/**
 * The service's day of `instant`: the date it falls on in the service's time zone, as the
 * list-by-date route names it (yyyy-MM-dd). The one rule for "today" of Get Many and the trigger.
 */
export function serviceDay(instant: Date | number, timeZone: string): string {
	const parts = new Intl.DateTimeFormat('en-US', {
		timeZone,
		year: 'numeric',
		month: '2-digit',
		day: '2-digit',
	}).formatToParts(instant);
	const part = (type: string) => parts.find((entry) => entry.type === type)?.value ?? '';
	return `${part('year')}-${part('month')}-${part('day')}`;
}

/**
 * A record as the nodes output it: the service's fields, fileLength beside the service's own
 * spelling fileLenght, and listedDate, the date it was listed under (the day asked for).
 */
function outputRecord(entry: unknown, day: string): IDataObject {
	const record =
		typeof entry === 'object' && entry !== null
			? (entry as IDataObject)
			: { value: entry as IDataObject[string] };
	const fileLength =
		'fileLenght' in record && !('fileLength' in record) ? { fileLength: record.fileLenght } : {};
	return { ...record, ...fileLength, listedDate: day };
}

/**
 * The most of a list answer that is read: about 30 000 records, more than the rate limit lets an
 * account upload in a day (17 280 requests).
 */
export const LIST_ANSWER_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * The uploaded-file records of one date (GET /api/xml/{yyyy-MM-dd}), in the order the service gives
 * them. The spec leaves open whether the answer is an array or a single record, so both are read;
 * no body means no uploads. Any other answer fails: taken for "no uploads", it would hide them.
 */
export async function listUploads(
	context: ServiceContext,
	day: string,
	options: { customer?: CustomerOverride; itemIndex?: number } = {},
): Promise<IDataObject[]> {
	const path = `/api/xml/${day}`;
	const { body } = await serviceRequest(context, {
		method: 'GET',
		path,
		customer: options.customer,
		itemIndex: options.itemIndex,
		maxAnswerBytes: LIST_ANSWER_LIMIT_BYTES,
	});
	if (body === undefined || body === null || body === '') return [];
	if (Array.isArray(body)) return body.map((entry) => outputRecord(entry, day));
	if (typeof body === 'object') return [outputRecord(body, day)];
	throw new NodeApiError(
		context.getNode(),
		{ message: 'The service answered the list of uploads with something other than records' },
		{
			itemIndex: options.itemIndex,
			description: `GET ${path} answered: ${cleanServiceText(String(body), 200)}`,
		},
	);
}

/** When the service received the upload a listing record describes, if the record says so readably. */
export function receivedAtMs(record: IDataObject): number | undefined {
	const value = typeof record.receivedAt === 'string' ? Date.parse(record.receivedAt) : Number.NaN;
	return Number.isNaN(value) ? undefined : value;
}

/** How far the service's clock may be from this machine's when looking for an upload it received. */
// How far the service's clock may be from this machine's. Kept short: a record received before the
// try by more than this is another upload (an earlier sync of the same catalogue has the same
// length), and adopting it would leave the document unsent; a longer skew costs a duplicate instead.
const CLOCK_SKEW_MS = 2 * 60_000;

/**
 * The uploads that may be the one a try sent without getting an answer: records of `bytes` bytes
 * (the record's `fileLenght`) received since the try began, give or take the clocks' difference,
 * other than the `known` sessions. Lists the service's day of the try and, past midnight, the next.
 */
export async function findPossibleArrivals(
	context: ServiceContext,
	attempt: { sentAt: number; bytes: number },
	options: { customer?: CustomerOverride; itemIndex?: number; known: Set<string>; now?: number },
): Promise<IDataObject[]> {
	const from = attempt.sentAt - CLOCK_SKEW_MS;
	const until = (options.now ?? Date.now()) + CLOCK_SKEW_MS;
	const timeZone = await getServiceTimeZone(context, options.itemIndex);
	const days = new Set(
		[from, attempt.sentAt, until].map((instant) => serviceDay(instant, timeZone)),
	);
	const candidates: IDataObject[] = [];
	for (const day of days) {
		for (const record of await listUploads(context, day, options)) {
			const receivedAt = receivedAtMs(record);
			if (
				Number(record.fileLenght) === attempt.bytes &&
				receivedAt !== undefined &&
				receivedAt >= from &&
				receivedAt <= until &&
				!options.known.has(String(record.id))
			) {
				candidates.push(record);
			}
		}
	}
	return candidates;
}
