import type { INodeProperties } from 'n8n-workflow';

/*
 * The credential's fields for where the bucket of its account lives, in the full edition
 * (../nodes/shared/fullEdition/sharing.ts reads them), through ./edition.ts. They stay here, with the credential: n8n's
 * gate lints files under nodes/ by the rules for node parameters, which want an option's name in
 * title case ("This n8n Process Only" is not).
 */

/** Rate Limit Sharing and the Redis server it may name. */
export const sharingProperties: INodeProperties[] = [
	{
		displayName: 'Rate Limit Sharing',
		name: 'rateLimitSharing',
		type: 'options',
		options: [
			{
				name: 'Automatic',
				value: 'automatic',
				description:
					'In queue mode, all n8n processes share the bucket through the Redis of the queue (its QUEUE_BULL_REDIS_* settings); otherwise this n8n process only',
			},
			{
				name: 'Redis',
				value: 'redis',
				description:
					'All n8n processes that use this credential share the bucket through the Redis server below',
			},
			{
				name: 'This n8n Process Only',
				value: 'process',
				description:
					'Each n8n process meters its own requests; when several use the account, refusals (429) slow them down',
			},
		],
		default: 'automatic',
		description:
			'How n8n processes that use this account (queue-mode workers, several main instances) share its request limit',
	},
	{
		displayName: 'Redis Host',
		name: 'redisHost',
		type: 'string',
		default: '',
		placeholder: 'e.g. redis.internal',
		description: 'Host name or IP address alone: the user, password and port have their own fields',
		displayOptions: { show: { rateLimitSharing: ['redis'] } },
	},
	{
		displayName: 'Redis Port',
		name: 'redisPort',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 65535, numberPrecision: 0 },
		default: 6379,
		displayOptions: { show: { rateLimitSharing: ['redis'] } },
	},
	{
		displayName: 'Redis Database Number',
		name: 'redisDatabase',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 0 },
		default: 0,
		description: 'A database the Redis server has (0 to 15 unless it is configured with more)',
		displayOptions: { show: { rateLimitSharing: ['redis'] } },
	},
	{
		displayName: 'Redis User',
		name: 'redisUser',
		type: 'string',
		default: '',
		description: 'Leave empty for Redis without ACL users',
		displayOptions: { show: { rateLimitSharing: ['redis'] } },
	},
	{
		displayName: 'Redis Password',
		name: 'redisPassword',
		type: 'string',
		typeOptions: { password: true },
		default: '',
		description:
			'Sent unencrypted unless Redis SSL is on, so it is only used without SSL for Redis on this machine (localhost, 127.0.0.1, ::1)',
		displayOptions: { show: { rateLimitSharing: ['redis'] } },
	},
	{
		displayName: 'Redis SSL',
		name: 'redisSsl',
		type: 'boolean',
		default: false,
		description: 'Whether to connect to Redis with TLS',
		displayOptions: { show: { rateLimitSharing: ['redis'] } },
	},
	{
		displayName: 'Ignore Redis SSL Issues (Insecure)',
		name: 'redisDisableTlsVerification',
		type: 'boolean',
		default: false,
		description: 'Whether to connect even if the Redis server certificate cannot be verified',
		displayOptions: { show: { rateLimitSharing: ['redis'], redisSsl: [true] } },
	},
];
