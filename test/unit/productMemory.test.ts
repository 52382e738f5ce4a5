import { keyedAccountDigest } from '../../nodes/ProductDataIntegration/actions/document/productMemory';

describe('keyedAccountDigest: the account as only the holder of its password can name it', () => {
	const account = {
		origin: 'https://service.example.com',
		username: 'alice',
		password: 'secret-1',
	};

	it('is the same for the same account and another for another password, username (case counts) or origin', () => {
		const digest = keyedAccountDigest(account);
		expect(keyedAccountDigest({ ...account })).toBe(digest);
		expect(keyedAccountDigest({ ...account, password: 'secret-2' })).not.toBe(digest);
		expect(keyedAccountDigest({ ...account, username: 'Alice' })).not.toBe(digest);
		expect(keyedAccountDigest({ ...account, username: ' alice' })).not.toBe(digest);
		expect(keyedAccountDigest({ ...account, origin: 'https://other.example.com' })).not.toBe(
			digest,
		);
	});

	it('holds neither the password nor the username readable', () => {
		const digest = keyedAccountDigest(account);
		expect(digest).toMatch(/^[0-9a-f]{64}$/);
		expect(digest).not.toContain(Buffer.from('secret-1').toString('hex'));
	});
});
