import type { INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { DEFAULT_ACCOUNT, SERVICE_VERSION } from '../../scripts/emulator';
import { runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';

const node = new ProductDataIntegration();

function getEnvironmentInfo(options: INodeParameters = {}): INodeParameters {
	return { resource: 'account', operation: 'getEnvironmentInfo', options };
}

describe('Account: Get Environment Info', () => {
	const { emulator, credentials } = useEmulator(FAST_BUCKET);

	it('returns the environment information without the auth token', async () => {
		const { output, error } = await runNode({
			node,
			parameters: getEnvironmentInfo(),
			credentials: credentials(),
		});

		expect(error).toBeUndefined();
		expect(output[0]).toHaveLength(1);
		const [{ json, pairedItem }] = output[0];
		expect(pairedItem).toEqual({ item: 0 });
		expect(json).toMatchObject({
			userName: DEFAULT_ACCOUNT.username,
			customerId: 1001,
			availableCustomers: { '1001': 'North Shop', '1002': 'South Shop', '1003': 'Head Office' },
			versions: { service: SERVICE_VERSION },
		});
		expect(json).not.toHaveProperty('authToken');
		expect(json).not.toHaveProperty('authTokenBytes');
		expect(emulator.stats().requests['GET /api/auth/me']).toBe(1);
	});

	it('asks the service once for all items of a run', async () => {
		const { output, error } = await runNode({
			node,
			parameters: getEnvironmentInfo({ includeAuthToken: '={{ $json.token }}' }),
			items: [{ json: { token: false } }, { json: { token: true } }, { json: { token: false } }],
			credentials: credentials(),
		});

		expect(error).toBeUndefined();
		expect(
			output[0].map(({ json, pairedItem }) => [json.userName, 'authToken' in json, pairedItem]),
		).toEqual([
			[DEFAULT_ACCOUNT.username, false, { item: 0 }],
			[DEFAULT_ACCOUNT.username, true, { item: 1 }],
			[DEFAULT_ACCOUNT.username, false, { item: 2 }],
		]);
		// Items are separate objects: changing one downstream does not change another.
		expect(output[0][0].json.availableCustomers).not.toBe(output[0][2].json.availableCustomers);
		expect(emulator.stats().requests['GET /api/auth/me']).toBe(1);
	});

	it('includes the auth token when asked', async () => {
		const { output, error } = await runNode({
			node,
			parameters: getEnvironmentInfo({ includeAuthToken: true }),
			credentials: credentials(),
		});

		expect(error).toBeUndefined();
		const { json } = output[0][0];
		expect(json.authToken).toMatchObject({ userName: DEFAULT_ACCOUNT.username, customerId: 1001 });
		expect(typeof json.authTokenBytes).toBe('string');
	});

	it('describes the customer the credential names', async () => {
		const { output } = await runNode({
			node,
			parameters: getEnvironmentInfo(),
			credentials: credentials({ customerId: 'SHOP-SOUTH', customerIdType: 'ExternalID' }),
		});

		expect(output[0][0].json).toMatchObject({ customerId: 1002, isHeadOffice: false });
	});

	it('fails with the service’s message on a wrong password, without showing the password', async () => {
		const password = 'not-the-password-123';

		const { error } = await runNode({
			node,
			parameters: getEnvironmentInfo(),
			credentials: credentials({ password }),
		});

		expect(error?.message).toBe('Authorization has been denied for this request.');
		expect(JSON.stringify(error)).not.toContain(password);
	});

	it('pairs each failure with its item under continue on fail', async () => {
		const { output, error } = await runNode({
			node,
			parameters: getEnvironmentInfo(),
			items: [{ json: { n: 1 } }, { json: { n: 2 } }],
			credentials: credentials({ password: 'wrong' }),
			continueOnFail: true,
		});

		expect(error).toBeUndefined();
		expect(output[0].map(({ json, pairedItem }) => [json.error, pairedItem])).toEqual([
			['Authorization has been denied for this request.', { item: 0 }],
			['Authorization has been denied for this request.', { item: 1 }],
		]);
	});
});
