import Redis from 'ioredis';
import type { IDataObject } from 'n8n-workflow';

import { EDITION } from '../../nodes/edition/edition';
import { closeStores } from '../../nodes/shared/fullEdition/sharedRegistry';
import { useEdition } from '../../nodes/shared/ports';
import { startRedis, type RedisServer } from '../../scripts/redis';

/**
 * A Redis with a password for the tests of the memory per product, started before the file's tests
 * and stopped after them, with the full edition in use: the credential fields that name it (Rate
 * Limit Sharing), its connection for the adapter itself, and a client that reads what it holds.
 */
export function useProductMemoryRedis(password: string): {
	withRedis: () => IDataObject;
	connection: () => { host: string; port: number; db: number; password: string };
	raw: () => Redis;
} {
	let redis: RedisServer | undefined;
	let raw: Redis | undefined;
	const started = () => {
		if (!redis) throw new Error('The Redis runs only while the tests of its file run');
		return redis;
	};
	beforeAll(async () => {
		useEdition(EDITION);
		redis = await startRedis({ password });
		raw = new Redis({ host: '127.0.0.1', port: redis.port, password });
	});
	afterAll(async () => {
		raw?.disconnect();
		await closeStores();
		await redis?.stop();
	});
	return {
		withRedis: () => ({
			rateLimitSharing: 'redis',
			redisHost: '127.0.0.1',
			redisPort: started().port,
			redisPassword: password,
		}),
		connection: () => ({ host: '127.0.0.1', port: started().port, db: 0, password }),
		raw: () => {
			if (!raw) throw new Error('The Redis runs only while the tests of its file run');
			return raw;
		},
	};
}
