import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { startEmulator } from '../../scripts/emulator';
import { emulatorCredentials, runListSearch, runNode } from '../../scripts/n8n/in-process';
import { customRateLimit, FAST_BUCKET, useEmulator } from '../helpers/emulator';

const node = new ProductDataIntegration();
const CHAIN = { username: 'shop-chain', password: 'chain-password' };
const { emulator, credentials: chainCredentials } = useEmulator({
	...FAST_BUCKET,
	accounts: [
		{
			...CHAIN,
			customers: [
				{ serviceId: 2002, externalId: 'ZETA', name: 'Zeta Store' },
				{ serviceId: 2001, externalId: 'ALPHA', name: 'Alpha Store' },
				{ serviceId: 2003, externalId: null, name: 'Chain Office' },
			],
		},
	],
});

describe('Customer option: the list', () => {
	const parameters = { resource: 'image', operation: 'find', searchBy: 'md5', options: {} };

	const credentials = (customerId: string, customerIdType = 'ServiceID') =>
		chainCredentials({ ...CHAIN, customerId, customerIdType });

	it('lists the account’s customer nodes by name, marking the credential’s own', async () => {
		const { results } = await runListSearch(
			node,
			'searchCustomers',
			parameters,
			credentials('2002'),
		);

		expect(results).toEqual([
			{ name: 'Alpha Store (2001)', value: '2001' },
			{ name: 'Chain Office (2003)', value: '2003' },
			{ name: 'Zeta Store (2002, the credential’s own)', value: '2002' },
		]);
		expect(emulator.stats().requests['GET /api/auth/me']).toBe(1);
	});

	it('marks the credential’s customer when it is named by external ID', async () => {
		const { results } = await runListSearch(
			node,
			'searchCustomers',
			parameters,
			credentials('ALPHA', 'ExternalID'),
		);

		expect(
			results.filter((result) => result.name.includes('own')).map((result) => result.value),
		).toEqual(['2001']);
	});

	it('narrows the list to the names that hold the search text', async () => {
		const { results } = await runListSearch(
			node,
			'searchCustomers',
			parameters,
			credentials('2002'),
			'store',
		);

		expect(results.map((result) => result.value)).toEqual(['2001', '2002']);
	});

	it('fails with the service’s message when the credential is wrong', async () => {
		await expect(
			runListSearch(node, 'searchCustomers', parameters, {
				...credentials('2001'),
				password: 'wrong',
			}),
		).rejects.toThrow('Authorization has been denied for this request.');
	});

	it('does not keep the editor waiting on a busy request limit beyond the Request Timeout', async () => {
		// An account of its own: one request, then one every ten minutes.
		const busy = await startEmulator({ bucketCapacity: 1, leakIntervalMs: 600_000 });
		try {
			const slow = emulatorCredentials(busy, {
				...customRateLimit(busy.options),
				requestTimeoutSeconds: 1,
			});
			await runListSearch(node, 'searchCustomers', parameters, slow);
			await expect(runListSearch(node, 'searchCustomers', parameters, slow)).rejects.toThrow(
				"The list of customer nodes was not loaded within 1 s (the credential's Request Timeout)",
			);
			expect(busy.stats().requests['GET /api/auth/me']).toBe(1);
		} finally {
			await busy.close();
		}
	});
});

describe('Customer option: the customer a request acts on', () => {
	const UNKNOWN_MD5 = '0123456789abcdef0123456789abcdef';
	const find = (customer: unknown) => ({
		resource: 'image',
		operation: 'find',
		searchBy: 'md5',
		md5: UNKNOWN_MD5,
		options: { customer },
	});

	// The credential names a customer the account does not have: only the override can pass.
	const foreign = () => chainCredentials({ ...CHAIN, customerId: '4242' });

	it.each([
		['from the list', { __rl: true, mode: 'list', value: '2001' }],
		['by service ID', { __rl: true, mode: 'serviceId', value: ' 2002 ' }],
		['by external ID', { __rl: true, mode: 'externalId', value: 'ALPHA' }],
		['as plain text (a service ID, as before the kinds)', '2001'],
	])('acts on the customer picked %s', async (_, customer) => {
		const { output, error } = await runNode({
			node,
			parameters: find(customer),
			credentials: foreign(),
		});

		expect(error).toBeUndefined();
		expect(output[0][0].json).toMatchObject({ found: false });
	});

	it('sends an external ID as one, which the service refuses as a service ID', async () => {
		const asServiceId = await runNode({
			node,
			parameters: find({ __rl: true, mode: 'externalId', value: '2001' }),
			credentials: foreign(),
		});
		expect(asServiceId.error?.message).toBe('Authorization has been denied for this request.');
	});

	it.each([
		[
			{ __rl: true, mode: 'serviceId', value: 'ALPHA' },
			'The Customer of item 0 is not a service ID: "ALPHA"',
		],
		[
			{ __rl: true, mode: 'list', value: 'ALPHA' },
			'The Customer of item 0 is not a service ID: "ALPHA"',
		],
		[
			{ __rl: true, mode: 'externalId', value: 'ALPHA\r\nX-Injected: 1' },
			'The Customer of item 0 is not an external ID: it must be one line of at most 200 characters',
		],
		[
			{ __rl: true, mode: 'externalId', value: 'STORE-€' },
			'The Customer of item 0 is not an external ID: it must be one line of at most 200 characters',
		],
		[
			{ __rl: true, mode: 'externalId', value: 'X'.repeat(201) },
			'The Customer of item 0 is not an external ID: it must be one line of at most 200 characters',
		],
	])('refuses a value of the wrong shape before any request: %j', async (customer, message) => {
		const before = emulator.stats().requests['GET /api/images'] ?? 0;

		const { error } = await runNode({ node, parameters: find(customer), credentials: foreign() });

		expect(error?.message).toBe(message);
		expect(emulator.stats().requests['GET /api/images'] ?? 0).toBe(before);
	});

	it('uses the credential’s customer when none is picked', async () => {
		const { error } = await runNode({
			node,
			parameters: find({ __rl: true, mode: 'list', value: '' }),
			credentials: { ...foreign(), customerId: '2002' },
		});
		expect(error).toBeUndefined();
	});
});
