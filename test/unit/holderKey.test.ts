import * as crypto from 'crypto';

import { deriveHolderOf, holderKey } from '../../nodes/shared/transport/account';

jest.mock('crypto', () => {
	const actual = jest.requireActual<typeof import('crypto')>('crypto');
	return { ...actual, scrypt: jest.fn(actual.scrypt), scryptSync: jest.fn(actual.scryptSync) };
});

const credentials = {
	baseUrl: 'https://derive.example.com',
	username: 'bob',
	password: 'bob-secret',
};

describe("a holder's key", () => {
	it('is derived once per holder, off the event loop: concurrent first uses share one derivation', async () => {
		const keys = await Promise.all([
			deriveHolderOf(credentials),
			deriveHolderOf(credentials),
			deriveHolderOf({ ...credentials }),
		]);

		expect(new Set(keys).size).toBe(1);
		expect(holderKey(credentials.baseUrl, credentials.username, credentials.password)).toBe(
			keys[0],
		);
		expect(crypto.scrypt).toHaveBeenCalledTimes(1);
		expect(crypto.scryptSync).toHaveBeenCalledTimes(0);
	});
});
