import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { listRequest } from '../transport';

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
