import type { IDataObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { serviceRequest, type CustomerOverride, type ServiceContext } from './transport';

/** The date `instant` falls on in `timeZone`, as the list-by-date route names it (yyyy-MM-dd). */
export function formatDay(instant: Date | number, timeZone: string): string {
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
 * The uploaded-file records of one date (GET /api/xml/{yyyy-MM-dd}), in the order the service gives
 * them. The spec leaves open whether the answer is an array or a single record, so both are read;
 * no body means no uploads. Any other answer fails: taken for "no uploads", it would hide them.
 */
export async function listUploads(
	this: ServiceContext,
	day: string,
	options: { customer?: CustomerOverride; itemIndex?: number } = {},
): Promise<IDataObject[]> {
	const path = `/api/xml/${day}`;
	const { body } = await serviceRequest.call(this, {
		method: 'GET',
		path,
		customer: options.customer,
		itemIndex: options.itemIndex,
	});
	if (body === undefined || body === null || body === '') return [];
	if (Array.isArray(body)) {
		return body.map((entry) =>
			typeof entry === 'object' && entry !== null ? (entry as IDataObject) : { value: entry as IDataObject[string] },
		);
	}
	if (typeof body === 'object') return [body as IDataObject];
	throw new NodeApiError(
		this.getNode(),
		{ message: 'The service answered the list of uploads with something other than records' },
		{ itemIndex: options.itemIndex, description: `GET ${path} answered: ${String(body).slice(0, 200)}` },
	);
}
