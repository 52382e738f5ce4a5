import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { getSessionOutcome } from '../../../shared/sessions';
import { getCustomerOverride } from '../../../shared/customer';
import {
	customerOption,
	includeErrorMessageOption,
	allowedInternalHostsOption,
	sessionIdField,
} from '../../../shared/descriptions';
import { getSessionId } from './sessionId';

const properties: INodeProperties[] = [
	sessionIdField,
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [allowedInternalHostsOption, customerOption, includeErrorMessageOption],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['uploadSession'], operation: ['getResult'] } },
	properties,
);

export async function executeItem(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	const sessionId = getSessionId(context, itemIndex);
	const { includeErrorMessage = false } = context.getNodeParameter('options', itemIndex, {}) as {
		includeErrorMessage?: boolean;
	};
	const outcome = await getSessionOutcome(context, sessionId, {
		includeErrorMessage,
		itemIndex,
		customer: getCustomerOverride(context, itemIndex),
	});
	return { ...outcome };
}
