import { sharingDecision } from '../../nodes/shared/transport/sharing';

const QUEUE = { EXECUTIONS_MODE: 'queue' };

describe('Rate Limit Sharing: Automatic', () => {
	test('regular mode: this process only, nothing to say', () => {
		expect(sharingDecision({}, {})).toEqual({});
		expect(sharingDecision({ rateLimitSharing: 'automatic' }, { QUEUE_BULL_REDIS_HOST: 'redis' })).toEqual({});
	});

	test("queue mode: n8n's own Redis settings, with n8n's defaults", () => {
		expect(sharingDecision({}, QUEUE)).toEqual({ connection: { host: 'localhost', port: 6379, db: 0 } });
		expect(
			sharingDecision(
				{},
				{
					...QUEUE,
					QUEUE_BULL_REDIS_HOST: 'redis.internal',
					QUEUE_BULL_REDIS_PORT: '6380',
					QUEUE_BULL_REDIS_DB: '2',
					QUEUE_BULL_REDIS_USERNAME: 'n8n',
					QUEUE_BULL_REDIS_PASSWORD: '"secret"',
					QUEUE_BULL_REDIS_DUALSTACK: 'true',
				},
			),
		).toEqual({
			connection: { host: 'redis.internal', port: 6380, db: 2, username: 'n8n', password: 'secret', family: 0 },
		});
	});

	test('queue mode with TLS, as n8n configures it', () => {
		expect(sharingDecision({}, { ...QUEUE, QUEUE_BULL_REDIS_TLS: 'true' }).connection?.tls).toEqual({
			servername: undefined,
			rejectUnauthorized: true,
		});
		expect(
			sharingDecision(
				{},
				{
					...QUEUE,
					QUEUE_BULL_REDIS_TLS: '1',
					QUEUE_BULL_REDIS_TLS_SERVERNAME: 'redis.example.com',
					QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE: 'false',
				},
			).connection?.tls,
		).toEqual({ servername: 'redis.example.com', rejectUnauthorized: false });
	});

	test('a setting n8n reads from a file (QUEUE_BULL_REDIS_PASSWORD_FILE) is named, not guessed', () => {
		const decision = sharingDecision({}, { ...QUEUE, QUEUE_BULL_REDIS_PASSWORD_FILE: '/run/secrets/redis' });
		expect(decision.connection).toBeUndefined();
		expect(decision.notice).toMatch(/QUEUE_BULL_REDIS_PASSWORD_FILE.*Rate Limit Sharing to Redis/);
	});

	test('a Redis cluster is said to be unsupported, not silently ignored', () => {
		const decision = sharingDecision({}, { ...QUEUE, QUEUE_BULL_REDIS_CLUSTER_NODES: 'a:6379,b:6379' });
		expect(decision.connection).toBeUndefined();
		expect(decision.notice).toMatch(/cluster/);
	});
});

describe('Rate Limit Sharing: Redis and This n8n Process Only', () => {
	test("the credential's Redis server, whatever the mode", () => {
		expect(
			sharingDecision(
				{
					rateLimitSharing: 'redis',
					redisHost: ' redis.example.com ',
					redisPort: 6390,
					redisDatabase: 3,
					redisUser: 'limiter',
					redisPassword: 'pw',
					redisSsl: true,
					redisDisableTlsVerification: false,
				},
				{},
			),
		).toEqual({
			connection: {
				host: 'redis.example.com',
				port: 6390,
				db: 3,
				username: 'limiter',
				password: 'pw',
				tls: { servername: 'redis.example.com', rejectUnauthorized: true },
			},
		});
	});

	test('Redis without a host is said, not guessed', () => {
		expect(sharingDecision({ rateLimitSharing: 'redis', redisHost: '' }, QUEUE).notice).toMatch(/no Redis host/);
	});

	test('this process only, even in queue mode', () => {
		expect(sharingDecision({ rateLimitSharing: 'process' }, QUEUE)).toEqual({});
	});
});
