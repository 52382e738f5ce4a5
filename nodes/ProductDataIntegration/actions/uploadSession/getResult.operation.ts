import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { getSessionOutcome } from '../../../shared/sessions';
import { customerOption, getCustomerOverride } from '../../../shared/customer';
import { includeErrorMessageOption } from '../../../shared/errorDocument';
import { getSessionId, sessionIdField } from './sessionId';

const properties: INodeProperties[] = [
	sessionIdField,
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [customerOption, includeErrorMessageOption],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['uploadSession'], operation: ['getResult'] } },
	properties,
);

export async function executeItem(
	this: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	const sessionId = getSessionId(this, itemIndex);
	const { includeErrorMessage = false } = this.getNodeParameter('options', itemIndex, {}) as {
		includeErrorMessage?: boolean;
	};
	const outcome = await getSessionOutcome.call(this, sessionId, {
		includeErrorMessage,
		itemIndex,
		customer: getCustomerOverride.call(this, itemIndex),
	});
	return { ...outcome };
}
