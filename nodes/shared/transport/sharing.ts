import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import type { RedisConnection } from '../throttle/redisBucket';
import type { SharingDecision } from '../throttle/sharedRegistry';

/**
 * Where the account's bucket lives, from the credential's Rate Limit Sharing:
 * - automatic (the default): in the Redis of n8n's queue mode when this n8n process runs in queue
 *   mode, read from the QUEUE_BULL_REDIS_* settings every main and worker of such a set-up already
 *   has, the way n8n itself reads them; in this process otherwise;
 * - redis: in the Redis server the credential names;
 * - process: in this process only.
 */
export type RateLimitSharing = 'automatic' | 'redis' | 'process';

type Environment = Record<string, string | undefined>;

/** A setting as n8n reads it: trimmed, without surrounding quotes. */
function setting(env: Environment, name: string): string | undefined {
	return env[name]?.trim().replace(/^(['"])(.*)\1$/, '$2');
}

// n8n also reads each setting from the file `<name>_FILE` names (e.g. a Docker secret); a
// community node may not read files, so such settings are named instead of guessed.
const FILE_SETTINGS = ['HOST', 'PORT', 'DB', 'USERNAME', 'PASSWORD', 'TLS'].map((name) => `QUEUE_BULL_REDIS_${name}`);

function flag(env: Environment, name: string, fallback: boolean): boolean {
	const value = setting(env, name)?.toLowerCase();
	if (value === 'true' || value === '1') return true;
	if (value === 'false' || value === '0') return false;
	return fallback;
}

function whole(value: unknown, fallback: number): number {
	const number = typeof value === 'number' ? value : Number(typeof value === 'string' && value.trim() !== '' ? value : Number.NaN);
	return Number.isInteger(number) && number >= 0 ? number : fallback;
}

/** The Redis of n8n's queue mode, as its QUEUE_BULL_REDIS_* settings describe it. */
export function queueModeRedis(env: Environment): SharingDecision {
	if (setting(env, 'EXECUTIONS_MODE') !== 'queue') return {};
	if (setting(env, 'QUEUE_BULL_REDIS_CLUSTER_NODES')) {
		return {
			notice:
				'n8n runs in queue mode with a Redis cluster, which the shared rate limit does not support yet: each n8n process limits its own requests',
		};
	}
	const fromFiles = FILE_SETTINGS.filter((name) => env[name] === undefined && env[`${name}_FILE`]);
	if (fromFiles.length > 0) {
		return {
			notice: `n8n reads ${fromFiles.map((name) => `${name}_FILE`).join(', ')}, which this node cannot read: set Rate Limit Sharing to Redis in the credential to share the rate limit; each n8n process limits its own requests meanwhile`,
		};
	}
	const connection: RedisConnection = {
		host: setting(env, 'QUEUE_BULL_REDIS_HOST') || 'localhost',
		port: whole(setting(env, 'QUEUE_BULL_REDIS_PORT'), 6379),
		db: whole(setting(env, 'QUEUE_BULL_REDIS_DB'), 0),
		username: setting(env, 'QUEUE_BULL_REDIS_USERNAME') || undefined,
		password: setting(env, 'QUEUE_BULL_REDIS_PASSWORD') || undefined,
	};
	if (flag(env, 'QUEUE_BULL_REDIS_DUALSTACK', false)) connection.family = 0;
	if (flag(env, 'QUEUE_BULL_REDIS_TLS', false)) {
		connection.tls = {
			servername: setting(env, 'QUEUE_BULL_REDIS_TLS_SERVERNAME') || undefined,
			rejectUnauthorized: flag(env, 'QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE', true),
		};
	}
	return { connection };
}

/** The Redis server the credential names (Rate Limit Sharing = Redis). */
function credentialRedis(credentials: ICredentialDataDecryptedObject): SharingDecision {
	const host = typeof credentials.redisHost === 'string' ? credentials.redisHost.trim() : '';
	if (host === '') {
		return { notice: 'Rate Limit Sharing is set to Redis but the credential names no Redis host: each n8n process limits its own requests' };
	}
	const connection: RedisConnection = {
		host,
		port: whole(credentials.redisPort, 6379),
		db: whole(credentials.redisDatabase, 0),
		username: typeof credentials.redisUser === 'string' && credentials.redisUser !== '' ? credentials.redisUser : undefined,
		password:
			typeof credentials.redisPassword === 'string' && credentials.redisPassword !== '' ? credentials.redisPassword : undefined,
	};
	if (credentials.redisSsl === true) {
		connection.tls = { servername: host, rejectUnauthorized: credentials.redisDisableTlsVerification !== true };
	}
	return { connection };
}

export function sharingDecision(credentials: ICredentialDataDecryptedObject, env: Environment): SharingDecision {
	const sharing = (credentials.rateLimitSharing ?? 'automatic') as RateLimitSharing;
	if (sharing === 'process') return {};
	if (sharing === 'redis') return credentialRedis(credentials);
	return queueModeRedis(env);
}

/** Where the bucket of the credential's account lives, for this n8n process (its environment). */
export function sharingFor(credentials: ICredentialDataDecryptedObject): SharingDecision {
	return sharingDecision(credentials, process.env);
}
