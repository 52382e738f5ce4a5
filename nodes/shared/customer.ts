import type {
	IExecuteFunctions,
	ILoadOptionsFunctions,
	INodeListSearchResult,
	INodeProperties,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { EXTERNAL_ID, listRequest, SERVICE_ID, type CustomerOverride } from './transport';

/**
 * Goes into the "Options" collection of every operation (and of the trigger) whose requests name a
 * customer node: the credential's customer is the default, this picks another node of the account,
 * from the list or by either kind of ID.
 */
export const customerOption: INodeProperties = {
	displayName: 'Customer',
	name: 'customer',
	type: 'resourceLocator',
	default: { mode: 'list', value: '' },
	description: 'Customer node to act on instead of the one in the credential',
	modes: [
		{
			displayName: 'From List',
			name: 'list',
			type: 'list',
			placeholder: 'Select a customer...',
			typeOptions: { searchListMethod: 'searchCustomers', searchable: true },
		},
		{
			displayName: 'By ID',
			name: 'serviceId',
			type: 'string',
			placeholder: 'e.g. 1002',
			hint: 'The service ID: the number the service gave the customer node',
			validation: [
				{
					type: 'regex',
					properties: {
						regex: SERVICE_ID.source,
						errorMessage: 'A service ID is a number, e.g. 1002',
					},
				},
			],
		},
		{
			displayName: 'External ID',
			name: 'externalId',
			type: 'string',
			placeholder: 'e.g. STORE-NORTH',
			hint: 'Your own ID of the customer node',
			validation: [
				{
					type: 'regex',
					properties: {
						regex: EXTERNAL_ID.source,
						errorMessage: 'An external ID is one line of Latin-1 text, at most 200 characters',
					},
				},
			],
		},
	],
};

/** The "Options" collection of an operation whose only option is the customer node. */
export const customerOnlyOptions: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [customerOption],
};

interface CustomerLocator {
	mode?: string;
	value?: unknown;
}

/**
 * The customer node the Options of an item (or of the trigger) pick, if not the credential's. A value
 * of the wrong shape for its kind is refused here, before a request is spent on it: the service
 * would answer a generic 401. A plain text value (workflows from before the kinds) is a service ID.
 */
export function getCustomerOverride(
	context: IExecuteFunctions | IPollFunctions,
	itemIndex = 0,
): CustomerOverride | undefined {
	// A trigger has no input items: its parameters are read without an item index.
	const isTrigger = !('getInputData' in context);
	// Only the option itself: reading the whole collection would evaluate every other option's
	// expression again, for every item.
	const customer = isTrigger
		? context.getNodeParameter('options.customer', null)
		: context.getNodeParameter('options.customer', itemIndex, null);
	return customerOverrideOf(context, itemIndex, customer);
}

/** The customer node a Customer option's value (already read with its item's Options) picks. */
export function customerOverrideOf(
	context: IExecuteFunctions | IPollFunctions,
	itemIndex: number,
	customer: unknown,
): CustomerOverride | undefined {
	const isTrigger = !('getInputData' in context);
	const locator: CustomerLocator =
		typeof customer === 'object' && customer !== null
			? (customer as CustomerLocator)
			: { mode: 'serviceId', value: customer as CustomerLocator['value'] };
	const customerId = String(locator.value ?? '').trim();
	if (customerId === '') return undefined;
	const customerIdType = locator.mode === 'externalId' ? 'ExternalID' : 'ServiceID';
	const shape = customerIdType === 'ServiceID' ? SERVICE_ID : EXTERNAL_ID;
	if (!shape.test(customerId)) {
		const of = isTrigger ? '' : ` of item ${itemIndex}`;
		throw new NodeOperationError(
			context.getNode(),
			customerIdType === 'ServiceID'
				? `The Customer${of} is not a service ID: "${customerId.slice(0, 100)}"`
				: `The Customer${of} is not an external ID: it must be one line of at most 200 characters`,
			{
				itemIndex: isTrigger ? undefined : itemIndex,
				description:
					customerIdType === 'ServiceID'
						? 'A service ID is the number the service gave the customer node, e.g. 1002. For your own ID of the node, choose External ID.'
						: 'An external ID is your own ID of the customer node, as text on one line: it travels in a request header, which carries Latin-1 letters, digits and signs only.',
			},
		);
	}
	return { customerId, customerIdType };
}

interface EnvironmentInfo {
	customerId?: number;
	availableCustomers?: Record<string, string>;
}

/** The customer nodes the credential's user may act on, from the environment information. */
export async function searchCustomers(
	this: ILoadOptionsFunctions,
	filter?: string,
): Promise<INodeListSearchResult> {
	const response = await listRequest(this, 'customer nodes', {
		method: 'GET',
		path: '/api/auth/me',
	});
	const body = (response.body ?? {}) as EnvironmentInfo;
	const wanted = (filter ?? '').trim().toLowerCase();
	const results = Object.entries(body.availableCustomers ?? {})
		.map(([id, name]) => ({
			name:
				String(body.customerId) === id
					? `${name} (${id}, the credential’s own)`
					: `${name} (${id})`,
			value: id,
		}))
		.filter((customer) => customer.name.toLowerCase().includes(wanted))
		.sort((a, b) => a.name.localeCompare(b.name));
	return { results };
}
