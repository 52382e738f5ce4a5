import type { ILoadOptionsFunctions, INodePropertyOptions } from 'n8n-workflow';

import { serviceRequest } from '../../shared/transport';

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
