import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeApiError, updateDisplayOptions } from 'n8n-workflow';

import { cleanServiceText, serviceRequest } from '../../../shared/transport';
import { getCustomerOverride } from '../../../shared/customer';
import { customerOnlyOptions, sessionIdField } from '../../../shared/descriptions';
import { getSessionId } from './sessionId';

const properties: INodeProperties[] = [sessionIdField, customerOnlyOptions];

export const description = updateDisplayOptions(
	{ show: { resource: ['uploadSession'], operation: ['isDone'] } },
	properties,
);

/** The service's boolean as JSON (`true`), a JSON string (`"true"`) or text (`True`). */
function parseDone(body: unknown): boolean | undefined {
	if (typeof body === 'boolean') return body;
	const text = String(body ?? '')
		.trim()
		.replace(/^"(.*)"$/, '$1')
		.trim()
		.toLowerCase();
	if (text === 'true') return true;
	if (text === 'false') return false;
	return undefined;
}

export async function executeItem(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	const sessionId = getSessionId(context, itemIndex);
	const response = await serviceRequest(context, {
		method: 'GET',
		path: `/api/status/${encodeURIComponent(sessionId)}/done`,
		customer: getCustomerOverride(context, itemIndex),
		itemIndex,
		responseType: 'text',
	});
	const done = parseDone(response.body);
	if (done === undefined) {
		throw new NodeApiError(
			context.getNode(),
			{ message: 'The service answered neither true nor false to whether the session is done' },
			{
				itemIndex,
				description: `It answered: ${cleanServiceText(String(response.body ?? ''), 200)}`,
			},
		);
	}
	return { sessionId, done };
}
