/** The process's limiters and Redis connections: nothing kept for accounts and Redis logins no longer used. */
import { sleep } from 'n8n-workflow';

import type { RedisConnection } from '../../nodes/shared/fullEdition/bucketStore';
import { limiterFor, storeFor } from '../../nodes/shared/fullEdition/sharedRegistry';
import { accountKey } from '../../nodes/shared/transport/account';
import { startRedis, type RedisServer } from '../../scripts/redis';

const TERMS = { holder: 'holder', terms: { capacity: 5, intervalMs: 100 } };
let accounts = 0;

function freshAccount(): string {
	accounts++;
	return accountKey(`https://registry-${accounts}.example.com`, `user-${Date.now()}`);
}

describe('limiters and Redis connections no longer used are released', () => {
	let redis: RedisServer;

	beforeAll(async () => {
		redis = await startRedis();
	});

	afterAll(async () => {
		await redis?.stop();
	});

	function login(password: string): RedisConnection {
		return { host: '127.0.0.1', port: redis.port, db: 0, username: 'default', password };
	}

	test('an edited Redis password leaves one store for the account, not one more per edit', () => {
		const account = freshAccount();
		const stores = ['first', 'second', 'third'].map((password) => {
			limiterFor(account, TERMS, { connection: login(password) }, sleep);
			return storeFor(login(password));
		});
		// The last login is kept; the earlier ones were forgotten, so asking again makes a new store.
		expect(storeFor(login('third'))).toBe(stores[2]);
		expect(storeFor(login('first'))).not.toBe(stores[0]);
		expect(storeFor(login('second'))).not.toBe(stores[1]);
	});

	test('a store another account still uses is kept', () => {
		const [one, other] = [freshAccount(), freshAccount()];
		limiterFor(one, TERMS, { connection: login('shared') }, sleep);
		limiterFor(other, TERMS, { connection: login('shared') }, sleep);
		const shared = storeFor(login('shared'));
		limiterFor(one, TERMS, { connection: login('edited') }, sleep);
		expect(storeFor(login('shared'))).toBe(shared);
	});

	test('a limiter handed out before its store was released still reaches Redis', async () => {
		const account = freshAccount();
		const noLogin = { host: '127.0.0.1', port: redis.port, db: 0 };
		const before = limiterFor(account, TERMS, { connection: noLogin }, sleep);
		await (await before.acquire()).settle();
		limiterFor(account, TERMS, { connection: { ...noLogin, db: 1 } }, sleep);
		const warnings: string[] = [];
		const grant = await before.acquire({
			logger: { debug: () => undefined, warn: (message) => warnings.push(message) },
		});
		await grant.settle();
		expect(warnings).toEqual([]);
		await storeFor({ ...noLogin, db: 1 }).close();
	});

	test('the accounts kept are bounded: the least recently used go first', () => {
		const first = freshAccount();
		const limiter = limiterFor(first, TERMS, {}, sleep);
		expect(limiterFor(first, TERMS, {}, sleep)).toBe(limiter);
		for (let index = 0; index < 100; index++) limiterFor(freshAccount(), TERMS, {}, sleep);
		expect(limiterFor(first, TERMS, {}, sleep)).not.toBe(limiter);
	});
});
