import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';

import type { CustomerOverride } from '../../shared/transport';

/**
 * Goes into the "Options" collection of every operation whose request names a customer node: the
 * credential's customer is the default, this picks another node of the same account.
 */
export const customerOption: INodeProperties = {
	displayName: 'Customer Name or ID',
	name: 'customer',
	type: 'options',
	typeOptions: { loadOptionsMethod: 'getCustomers' },
	default: '',
	description:
		'Customer node to act on instead of the one in the credential, by service ID. Choose from the list, or specify an ID using an <a href="https://docs.n8n.io/code/expressions/">expression</a>.',
};

export function getCustomerOverride(
	this: IExecuteFunctions,
	itemIndex: number,
): CustomerOverride | undefined {
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const customer = options.customer;
	if (customer === undefined || customer === null || String(customer).trim() === '') return undefined;
	return { customerId: String(customer).trim(), customerIdType: 'ServiceID' };
}
