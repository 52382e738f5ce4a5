import type { IExecuteFunctions } from 'n8n-workflow';

import { serviceRequest, type CustomerOverride } from '../../../shared/transport';
import { parseFindAnswer } from './responses';

export type ImageQuery = { md5: string } | { uri: string };

type LookupResult =
	| { found: false }
	| { found: true; hashcode: string }
	/** The service knows the image, but its answer holds no hashcode this node can read. */
	| { found: true; raw: string };

/** GET /api/images?md5=|uri=: 404 is an answer ("not there"), not an error. */
export async function lookUpImage(
	context: IExecuteFunctions,
	itemIndex: number,
	query: ImageQuery,
	customer: CustomerOverride | undefined,
): Promise<LookupResult> {
	const response = await serviceRequest(context, {
		method: 'GET',
		path: '/api/images',
		qs: { ...query },
		customer,
		itemIndex,
		responseType: 'text',
		allowStatus: [404],
	});
	if (response.statusCode === 404) return { found: false };
	const text = response.body as string;
	const hashcode = parseFindAnswer(text);
	return hashcode === undefined ? { found: true, raw: text } : { found: true, hashcode };
}

export const UNREADABLE_FIND_ANSWER =
	'The service knows this image, but its answer holds no hashcode this node can read: see raw';
