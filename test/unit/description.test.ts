import type { INodeProperties } from 'n8n-workflow';

import { ProductDataIntegrationApi } from '../../credentials/ProductDataIntegrationApi.credentials';
import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { ProductDataIntegrationTrigger } from '../../nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node';

/** The property `name` shown for the given resource and operation. */
function property(name: string, resource: string, operation: string): INodeProperties {
	const found = new ProductDataIntegration().description.properties.find(
		(entry) =>
			entry.name === name &&
			entry.displayOptions?.show?.resource?.includes(resource) &&
			entry.displayOptions?.show?.operation?.includes(operation),
	);
	if (!found) throw new Error(`No property ${name} for ${resource}/${operation}`);
	return found;
}

describe('what the editor panel says', () => {
	it('says what 0 means for Items per Document', () => {
		for (const operation of ['upload', 'uploadCustom']) {
			const { hint, default: initial } = property('itemsPerDocument', 'document', operation);
			expect(initial).toBe(0);
			expect(hint).toMatch(/^0 puts all input items into one document/);
		}
	});

	it('says that Get Many outputs nothing on a day without uploads, and what to do about it', () => {
		expect(property('date', 'document', 'getMany').hint).toBe(
			'A day without uploads outputs no items, so the nodes after this one do not run; to run them anyway, turn on Always Output Data in the node’s settings',
		);
	});

	it('states the service time zone in the credential, UTC unless set', () => {
		const zone = new ProductDataIntegrationApi().properties.find(
			(entry) => entry.name === 'serviceTimeZone',
		);
		expect(zone).toMatchObject({
			displayName: 'Service Time Zone',
			type: 'string',
			default: 'UTC',
		});
	});

	it('offers the customer override by list, service ID or external ID, in both nodes', () => {
		const options = (name: string, properties: INodeProperties[]) =>
			(properties.find((entry) => entry.name === name && entry.type === 'collection')?.options ??
				[]) as INodeProperties[];
		const actionCustomer = options('options', [property('options', 'image', 'find')]).find(
			(entry) => entry.name === 'customer',
		);
		const triggerCustomer = options(
			'options',
			new ProductDataIntegrationTrigger().description.properties,
		).find((entry) => entry.name === 'customer');
		for (const customer of [actionCustomer, triggerCustomer]) {
			expect(customer?.type).toBe('resourceLocator');
			expect(customer?.modes?.map((mode) => mode.name)).toEqual([
				'list',
				'serviceId',
				'externalId',
			]);
		}
	});
});
