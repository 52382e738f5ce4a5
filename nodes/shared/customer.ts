import type { IExecuteFunctions, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { EXTERNAL_ID, SERVICE_ID, type CustomerOverride } from './transport';

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
