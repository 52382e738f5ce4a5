import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { getServiceTimeZone, listUploads, serviceDay } from '../../../shared/uploads';
import { getCustomerOverride } from '../../../shared/customer';
import { customerOnlyOptions } from '../../../shared/descriptions';
import { readOncePerRun } from '../../../shared/transport';

const properties: INodeProperties[] = [
	{
		displayName: 'Date',
		name: 'date',
		type: 'dateTime',
		default: '',
		description:
			'Day whose uploads to list, as the service dates them (the credential’s Service Time Zone). Leave empty for the service’s today. A date such as 2024-05-31 is taken as it is; a date and time with an offset (e.g. 2024-05-31T08:00:00+02:00) is moved to the service’s day.',
		hint: 'A day without uploads outputs no items, so the nodes after this one do not run; to run them anyway, turn on Always Output Data in the node’s settings',
	},
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
	customerOnlyOptions,
];

export const description = updateDisplayOptions(
	{ show: { resource: ['document'], operation: ['getMany'] } },
	properties,
);

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

function isCalendarDate(text: string): boolean {
	const match = DATE_ONLY.exec(text);
	if (!match) return false;
	const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
	const date = new Date(Date.UTC(year, month - 1, day));
	return (
		date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
	);
}

/**
 * The day to list as yyyy-MM-dd. A bare date or a date and time without offset is a day of the
 * service as written; an instant (offset, Z, epoch milliseconds, a Date) is moved to the service's
 * time zone. Undefined when the value is no date.
 */
export function listDate(value: unknown, timeZone: string, now = new Date()): string | undefined {
	if (value === undefined || value === null || value === '') return serviceDay(now, timeZone);
	if (value instanceof Date)
		return Number.isNaN(value.getTime()) ? undefined : serviceDay(value, timeZone);
	if (typeof value === 'number')
		return Number.isFinite(value) ? serviceDay(value, timeZone) : undefined;
	// Luxon DateTime values of expressions ($now, $today) turn into ISO text.
	const text =
		typeof value === 'object' && typeof (value as { toISO?: unknown }).toISO === 'function'
			? String((value as { toISO: () => string }).toISO())
			: String(value).trim();
	if (isCalendarDate(text)) return text;
	const match = DATE_TIME.exec(text);
	if (!match || !isCalendarDate(match[1])) return undefined;
	if (!match[2]) return match[1];
	const instant = new Date(text.replace(' ', 'T'));
	return Number.isNaN(instant.getTime()) ? undefined : serviceDay(instant, timeZone);
}

export async function executeItem(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject[]> {
	const rawDate = context.getNodeParameter('date', itemIndex, '') as unknown;
	const date = listDate(rawDate, await getServiceTimeZone(context, itemIndex));
	if (date === undefined) {
		throw new NodeOperationError(
			context.getNode(),
			`The Date of item ${itemIndex} is not a valid date: "${String(rawDate)}"`,
			{
				itemIndex,
				description:
					'Give a date such as 2024-05-31, or a date and time in ISO 8601 such as 2024-05-31T08:00:00+02:00',
			},
		);
	}
	const returnAll = context.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll ? Infinity : (context.getNodeParameter('limit', itemIndex, 50) as number);

	const customer = getCustomerOverride(context, itemIndex);
	const records = await readOncePerRun(
		context,
		JSON.stringify(['uploads', date, customer ?? null]),
		async () => await listUploads(context, date, { customer, itemIndex }),
	);
	return records.slice(0, limit);
}
