import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { startEmulator, type Emulator } from '../../scripts/emulator';
import { emulatorCredentials, runLoadOptions } from '../../scripts/n8n/in-process';

const node = new ProductDataIntegration();

describe('loadOptions: getCustomers', () => {
	let emulator: Emulator;
	const parameters = { resource: 'image', operation: 'find', searchBy: 'md5', options: {} };

	beforeAll(async () => {
		emulator = await startEmulator({
			accounts: [
				{
					username: 'shop-chain',
					password: 'chain-password',
					customers: [
						{ serviceId: 2002, externalId: 'ZETA', name: 'Zeta Store' },
						{ serviceId: 2001, externalId: 'ALPHA', name: 'Alpha Store' },
						{ serviceId: 2003, externalId: null, name: 'Chain Office' },
					],
				},
			],
		});
	});

	afterAll(async () => {
		await emulator.close();
	});

	const credentials = (customerId: string, customerIdType = 'ServiceID') =>
		emulatorCredentials(emulator, { username: 'shop-chain', password: 'chain-password', customerId, customerIdType });

	it('lists the account’s customer nodes by name, marking the credential’s own', async () => {
		const options = await runLoadOptions(node, 'getCustomers', parameters, credentials('2002'));

		expect(options).toEqual([
			{ name: 'Alpha Store (2001)', value: '2001' },
			{ name: 'Chain Office (2003)', value: '2003' },
			{ name: 'Zeta Store (2002)', value: '2002', description: 'The credential’s own customer' },
		]);
		expect(emulator.stats().requests['GET /api/auth/me']).toBe(1);
	});

	it('marks the credential’s customer when it is named by external ID', async () => {
		const options = await runLoadOptions(node, 'getCustomers', parameters, credentials('ALPHA', 'ExternalID'));

		expect(options.filter((option) => option.description).map((option) => option.value)).toEqual(['2001']);
	});

	it('fails with the service’s message when the credential is wrong', async () => {
		await expect(
			runLoadOptions(node, 'getCustomers', parameters, { ...credentials('2001'), password: 'wrong' }),
		).rejects.toThrow('Authorization has been denied for this request.');
	});
});
