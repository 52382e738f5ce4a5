import { sharingDecision, sharingFor } from '../../nodes/shared/fullEdition/sharing';

const QUEUE = { EXECUTIONS_MODE: 'queue' };

describe('Rate Limit Sharing: Automatic', () => {
	test('regular mode: this process only, nothing to say', () => {
		expect(sharingDecision({}, {})).toEqual({});
		expect(
			sharingDecision({ rateLimitSharing: 'automatic' }, { QUEUE_BULL_REDIS_HOST: 'redis' }),
		).toEqual({});
	});

	test("queue mode: n8n's own Redis settings, with n8n's defaults", () => {
		expect(sharingDecision({}, QUEUE)).toEqual({
			connection: { host: 'localhost', port: 6379, db: 0 },
		});
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
			connection: {
				host: 'redis.internal',
				port: 6380,
				db: 2,
				username: 'n8n',
				password: 'secret',
				family: 0,
			},
		});
	});

	test('queue mode with TLS, as n8n configures it', () => {
		expect(sharingDecision({}, { ...QUEUE, QUEUE_BULL_REDIS_TLS: 'true' }).connection?.tls).toEqual(
			{
				servername: undefined,
				rejectUnauthorized: true,
			},
		);
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
		const decision = sharingDecision(
			{},
			{ ...QUEUE, QUEUE_BULL_REDIS_PASSWORD_FILE: '/run/secrets/redis' },
		);
		expect(decision.connection).toBeUndefined();
		expect(decision.notice).toMatch(/QUEUE_BULL_REDIS_PASSWORD_FILE.*Rate Limit Sharing to Redis/);
	});

	test('a Redis cluster is said to be unsupported, not silently ignored', () => {
		const decision = sharingDecision(
			{},
			{ ...QUEUE, QUEUE_BULL_REDIS_CLUSTER_NODES: 'a:6379,b:6379' },
		);
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
		expect(sharingDecision({ rateLimitSharing: 'redis', redisHost: '' }, QUEUE).notice).toMatch(
			/no Redis host/,
		);
	});

	test('this process only, even in queue mode', () => {
		expect(sharingDecision({ rateLimitSharing: 'process' }, QUEUE)).toEqual({});
	});
});

describe('Rate Limit Sharing: Automatic, in every way n8n is put in queue mode', () => {
	test('a process started as `n8n worker` or `n8n webhook` runs in queue mode whatever EXECUTIONS_MODE says', () => {
		for (const command of ['worker', 'webhook']) {
			expect(sharingDecision({}, {}, command)).toEqual({
				connection: { host: 'localhost', port: 6379, db: 0 },
			});
			expect(sharingDecision({}, { EXECUTIONS_MODE: 'regular' }, command).connection).toBeDefined();
		}
		expect(sharingDecision({}, {}, 'start')).toEqual({});
		expect(sharingDecision({}, {}, 'execute')).toEqual({});
	});

	test('sharingFor reads the command as n8n does: the first argument', () => {
		const saved = { argv: [...process.argv], mode: process.env.EXECUTIONS_MODE };
		delete process.env.EXECUTIONS_MODE;
		try {
			process.argv.splice(2, process.argv.length - 2, 'worker', '--concurrency=2');
			expect(sharingFor({}).connection).toBeDefined();
			process.argv.splice(2, process.argv.length - 2);
			expect(sharingFor({})).toEqual({});
		} finally {
			process.argv.splice(0, process.argv.length, ...saved.argv);
			if (saved.mode !== undefined) process.env.EXECUTIONS_MODE = saved.mode;
		}
	});

	test('EXECUTIONS_MODE_FILE, which a node cannot read, is said in the hint: it cannot know the mode', () => {
		const decision = sharingDecision({}, { EXECUTIONS_MODE_FILE: '/run/secrets/mode' });
		expect(decision.connection).toBeUndefined();
		expect(decision.notice).toMatch(
			/EXECUTIONS_MODE_FILE.*cannot know whether n8n runs in queue mode/,
		);
		// n8n reads the file only when the variable is not set at all; a worker is in queue mode anyway.
		expect(
			sharingDecision({}, { EXECUTIONS_MODE: 'queue', EXECUTIONS_MODE_FILE: '/run/secrets/mode' })
				.connection,
		).toBeDefined();
		expect(
			sharingDecision({}, { EXECUTIONS_MODE: '', EXECUTIONS_MODE_FILE: '/run/secrets/mode' }),
		).toEqual({});
		expect(
			sharingDecision({}, { EXECUTIONS_MODE_FILE: '/run/secrets/mode' }, 'worker').connection,
		).toBeDefined();
	});
});

describe("the credential's Redis settings, checked before anything connects", () => {
	const REDIS = { rateLimitSharing: 'redis', redisHost: 'redis.example.com', redisSsl: true };

	test.each([
		'user:s3cr3t-pw@redis.example.com',
		':s3cr3t-pw@redis.example.com',
		'redis://user:s3cr3t-pw@redis.example.com:6379',
		'redis.example.com:6379',
		'redis.example.com/0',
		'[::1]',
	])('a Redis Host that is not a host alone (%s) is refused without repeating it', (redisHost) => {
		const decision = sharingDecision({ ...REDIS, redisHost }, {});
		expect(decision.connection).toBeUndefined();
		expect(decision.notice).toMatch(
			/Redis Host of the credential must be a host name or IP address alone/,
		);
		expect(decision.notice).not.toContain('s3cr3t');
		expect(decision.notice).not.toContain('redis.example.com');
	});

	test('nor one in QUEUE_BULL_REDIS_HOST', () => {
		const decision = sharingDecision(
			{},
			{ ...QUEUE, QUEUE_BULL_REDIS_HOST: 'user:s3cr3t-pw@redis.internal' },
		);
		expect(decision.connection).toBeUndefined();
		expect(decision.notice).toMatch(/QUEUE_BULL_REDIS_HOST is not a host name or IP address alone/);
		expect(decision.notice).not.toContain('s3cr3t');
	});

	test.each(['redis.example.com', 'redis', '10.0.0.5', 'fd00::5', '127.0.0.1', '::1', 'localhost'])(
		'%s is a host',
		(redisHost) => {
			expect(sharingDecision({ ...REDIS, redisHost }, {}).connection?.host).toBe(redisHost);
		},
	);

	test.each([-1, 1.5, 2 ** 31, Number.NaN, '2x'])(
		'a Redis Database Number of %s is refused, not replaced by 0',
		(redisDatabase) => {
			const decision = sharingDecision({ ...REDIS, redisDatabase }, {});
			expect(decision.connection).toBeUndefined();
			expect(decision.notice).toMatch(
				/Redis Database Number of the credential must be a whole number from 0/,
			);
		},
	);

	test.each([0, 65536, 6379.5, 'x'])(
		'a Redis Port of %s is refused, not replaced by 6379',
		(redisPort) => {
			const decision = sharingDecision({ ...REDIS, redisPort }, {});
			expect(decision.connection).toBeUndefined();
			expect(decision.notice).toMatch(
				/Redis Port of the credential must be a whole number from 1 to 65535/,
			);
		},
	);

	test('the password is not sent unencrypted to another machine', () => {
		const decision = sharingDecision({ ...REDIS, redisSsl: false, redisPassword: 's3cr3t-pw' }, {});
		expect(decision.connection).toBeUndefined();
		expect(decision.notice).toMatch(
			/Redis password would be sent unencrypted to redis\.example\.com: turn on Redis SSL/,
		);
		expect(decision.notice).not.toContain('s3cr3t');
		// With TLS, or without a password, the connection is made.
		expect(sharingDecision({ ...REDIS, redisPassword: 's3cr3t-pw' }, {}).connection?.password).toBe(
			's3cr3t-pw',
		);
		expect(sharingDecision({ ...REDIS, redisSsl: false }, {}).connection).toBeDefined();
	});

	test.each(['localhost', '127.0.0.1', '127.1', '::1', '::ffff:127.0.0.1', 'LOCALHOST'])(
		'without TLS the password goes to this machine (%s), by the Base URL rule',
		(redisHost) => {
			expect(
				sharingDecision({ ...REDIS, redisHost, redisSsl: false, redisPassword: 'pw' }, {})
					.connection?.password,
			).toBe('pw');
		},
	);

	test.each(['10.0.0.5:6380', '127.0.0.1:6379', 'redis:6380', '1.2.3.4:'])(
		'an IPv4 address or name with a port (%s) is refused, not taken for IPv6',
		(redisHost) => {
			const decision = sharingDecision({ ...REDIS, redisHost }, {});
			expect(decision.connection).toBeUndefined();
			expect(decision.notice).toMatch(
				/Redis Host of the credential must be a host name or IP address alone/,
			);
			expect(
				sharingDecision({}, { ...QUEUE, QUEUE_BULL_REDIS_HOST: redisHost }).connection,
			).toBeUndefined();
		},
	);
});
