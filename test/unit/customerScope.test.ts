import { createHash } from 'node:crypto';

import { customerScope, holderKey } from '../../nodes/shared/transport/account';

const credentials = {
	baseUrl: 'https://scope.example.com',
	username: 'alice',
	password: 'secret',
	customerIdType: 'ServiceID',
	customerId: '1001',
};

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('customerScope', () => {
	// The known images and the confirmed products are stored under these values: a change would make
	// every memory start empty.
	it('keeps the values the memories are stored under', () => {
		const holder = holderKey('https://scope.example.com', 'alice', 'secret');
		expect(customerScope(credentials, undefined)).toBe(sha256(`${holder}\nServiceID:1001`));
		expect(customerScope(credentials, undefined, '/api/xml')).toBe(
			sha256(`${holder}\nServiceID:1001\n/api/xml`),
		);
		expect(customerScope(credentials, { customerIdType: 'ExternalID', customerId: 'shop-7' })).toBe(
			sha256(`${holder}\nExternalID:shop-7`),
		);
	});

	it('names another scope for another password, customer node or route', () => {
		const owner = customerScope(credentials, undefined, '/api/xml');
		expect(customerScope({ ...credentials, password: 'other' }, undefined, '/api/xml')).not.toBe(
			owner,
		);
		expect(customerScope({ ...credentials, customerId: '1002' }, undefined, '/api/xml')).not.toBe(
			owner,
		);
		expect(customerScope(credentials, undefined, '/api/xml/custom')).not.toBe(owner);
	});
});
