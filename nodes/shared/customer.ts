import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	ILoadOptionsFunctions,
	INodeProperties,
	INodePropertyOptions,
	IPollFunctions,
} from 'n8n-workflow';

import { serviceRequest, type CustomerOverride } from './transport';

/**
 * Goes into the "Options" collection of every operation (and of the trigger) whose requests name a
 * customer node: the credential's customer is the default, this picks another node of the account.
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

/** The customer node the Options of an item (or of the trigger) pick, if not the credential's. */
export function getCustomerOverride(
	this: IExecuteFunctions | IPollFunctions,
	itemIndex = 0,
): CustomerOverride | undefined {
	// A trigger has no input items: its parameters are read without an item index.
	const options = (
		'getInputData' in this
			? this.getNodeParameter('options', itemIndex, {})
			: this.getNodeParameter('options', {})
	) as IDataObject;
	const customer = String(options.customer ?? '').trim();
	return customer === '' ? undefined : { customerId: customer, customerIdType: 'ServiceID' };
}

/** The customer node requests act on: the override if there is one, else the credential's. */
export function effectiveCustomer(
	credentials: ICredentialDataDecryptedObject,
	override: CustomerOverride | undefined,
): CustomerOverride {
	return (
		override ?? {
			customerId: String(credentials.customerId ?? ''),
			customerIdType: credentials.customerIdType === 'ExternalID' ? 'ExternalID' : 'ServiceID',
		}
	);
}

interface EnvironmentInfo {
	customerId?: number;
	availableCustomers?: Record<string, string>;
}

/** The customer nodes the credential's user may act on, from the environment information. */
export async function getCustomers(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
	const response = await serviceRequest.call(this, { method: 'GET', path: '/api/auth/me' });
	const body = (response.body ?? {}) as EnvironmentInfo;
	const customers = Object.entries(body.availableCustomers ?? {});
	return customers
		.map(([id, name]) => ({
			name: `${name} (${id})`,
			value: id,
			description: String(body.customerId) === id ? 'The credential’s own customer' : undefined,
		}))
		.sort((a, b) => a.name.localeCompare(b.name));
}
