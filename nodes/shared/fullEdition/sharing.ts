import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import type { RedisConnection } from './bucketStore';
import type { SharingDecision } from './sharedRegistry';
import { isLoopbackHost } from '../throttle';

/**
 * Where the account's bucket lives, from the credential's Rate Limit Sharing:
 * - automatic (the default): in the Redis of n8n's queue mode when this n8n process runs in queue
 *   mode (EXECUTIONS_MODE, or started as `n8n worker`), read from the QUEUE_BULL_REDIS_* settings every main and worker of such a set-up already
 *   has, the way n8n itself reads them; in this process otherwise;
 * - redis: in the Redis server the credential names;
 * - process: in this process only.
 */
type RateLimitSharing = 'automatic' | 'redis' | 'process';

type Environment = Record<string, string | undefined>;

/** A setting as n8n reads it: trimmed, without surrounding quotes. */
function setting(env: Environment, name: string): string | undefined {
	return env[name]?.trim().replace(/^(['"])(.*)\1$/, '$2');
}

// n8n also reads each setting from the file `<name>_FILE` names (e.g. a Docker secret); a
// community node may not read files, so such settings are named instead of guessed.
const FILE_SETTINGS = ['HOST', 'PORT', 'DB', 'USERNAME', 'PASSWORD', 'TLS'].map(
	(name) => `QUEUE_BULL_REDIS_${name}`,
);

function flag(env: Environment, name: string, fallback: boolean): boolean {
	const value = setting(env, name)?.toLowerCase();
	if (value === 'true' || value === '1') return true;
	if (value === 'false' || value === '0') return false;
	return fallback;
}

function whole(value: unknown, fallback: number): number {
	const number =
		typeof value === 'number'
			? value
			: Number(typeof value === 'string' && value.trim() !== '' ? value : Number.NaN);
	return Number.isInteger(number) && number >= 0 ? number : fallback;
}

/** The n8n commands that run only in queue mode: a worker whatever EXECUTIONS_MODE says, a webhook process. */
const QUEUE_COMMANDS = ['worker', 'webhook'];

/**
 * Whether this n8n process runs in queue mode, as n8n decides it: its command (n8n takes the first
 * argument, `start` when there is none) or EXECUTIONS_MODE, which n8n reads from the file
 * EXECUTIONS_MODE_FILE names when the variable is not set at all. Undefined: only that file
 * could tell, and a community node may not read files.
 */
function queueMode(env: Environment, command: string | undefined): boolean | undefined {
	if (command !== undefined && QUEUE_COMMANDS.includes(command)) return true;
	if (env.EXECUTIONS_MODE === undefined && env.EXECUTIONS_MODE_FILE) return undefined;
	return setting(env, 'EXECUTIONS_MODE') === 'queue';
}

/**
 * A Redis host as a Redis client takes it: a host name or an IP address alone. Anything else
 * (`user:password@host`, a redis:// URL, a port) is refused without being repeated, since it may
 * hold a password that a hint or a log line would then show. An IPv6 address has at least two
 * colons: one colon is a host with a port (`10.0.0.5:6380`).
 */
const REDIS_HOST =
	/^(?:[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|(?=[^:]*:[^:]*:)[0-9a-f:.]+(?:%[\w.-]+)?)$/i;

const HOST_ALONE =
	'a host name or IP address alone (a user, password or port go in their own settings)';

function portNumber(value: number): boolean {
	return Number.isInteger(value) && value >= 1 && value <= 65535;
}

/** Redis numbers its databases from 0; the index it takes is a 32-bit integer. */
function databaseNumber(value: number): boolean {
	return Number.isInteger(value) && value >= 0 && value <= 2 ** 31 - 1;
}

/** The Redis of n8n's queue mode, as its QUEUE_BULL_REDIS_* settings describe it. */
function queueModeRedis(env: Environment, command?: string): SharingDecision {
	const queue = queueMode(env, command);
	if (queue === undefined) {
		return {
			notice:
				'n8n reads EXECUTIONS_MODE from EXECUTIONS_MODE_FILE, which this node cannot read, so it cannot know whether n8n runs in queue mode: set EXECUTIONS_MODE, or set Rate Limit Sharing in the credential to Redis (queue mode) or This n8n Process Only; each n8n process limits its own requests meanwhile',
		};
	}
	if (!queue) return {};
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
	const host = setting(env, 'QUEUE_BULL_REDIS_HOST') || 'localhost';
	if (!REDIS_HOST.test(host)) {
		return {
			notice: `QUEUE_BULL_REDIS_HOST is not ${HOST_ALONE}: each n8n process limits its own requests`,
		};
	}
	const connection: RedisConnection = {
		host,
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

const UNSHARED = 'each n8n process limits its own requests';

/**
 * The Redis server the credential names (Rate Limit Sharing = Redis). Settings that cannot be
 * right are said, and the process limits alone, rather than connecting somewhere else than meant;
 * so is a password that would travel unencrypted (Redis SSL off) to another machine, by the rule
 * the Base URL follows for plain http.
 */
function credentialRedis(credentials: ICredentialDataDecryptedObject): SharingDecision {
	const host = typeof credentials.redisHost === 'string' ? credentials.redisHost.trim() : '';
	if (host === '') {
		return {
			notice: `Rate Limit Sharing is set to Redis but the credential names no Redis host: ${UNSHARED}`,
		};
	}
	if (!REDIS_HOST.test(host)) {
		return { notice: `The Redis Host of the credential must be ${HOST_ALONE}: ${UNSHARED}` };
	}
	const port = Number(credentials.redisPort ?? 6379);
	if (!portNumber(port)) {
		return {
			notice: `The Redis Port of the credential must be a whole number from 1 to 65535: ${UNSHARED}`,
		};
	}
	const db = Number(credentials.redisDatabase ?? 0);
	if (!databaseNumber(db)) {
		return {
			notice: `The Redis Database Number of the credential must be a whole number from 0 (Redis has 0 to 15 unless configured otherwise): ${UNSHARED}`,
		};
	}
	const password =
		typeof credentials.redisPassword === 'string' && credentials.redisPassword !== ''
			? credentials.redisPassword
			: undefined;
	if (password !== undefined && credentials.redisSsl !== true && !isLoopbackHost(host)) {
		return {
			notice: `The Redis password would be sent unencrypted to ${host}: turn on Redis SSL (without it, Redis is only used with a password on localhost, 127.0.0.1 and ::1); ${UNSHARED}`,
		};
	}
	const connection: RedisConnection = {
		host,
		port,
		db,
		username:
			typeof credentials.redisUser === 'string' && credentials.redisUser !== ''
				? credentials.redisUser
				: undefined,
		password,
	};
	if (credentials.redisSsl === true) {
		connection.tls = {
			servername: host,
			rejectUnauthorized: credentials.redisDisableTlsVerification !== true,
		};
	}
	return { connection };
}

export function sharingDecision(
	credentials: ICredentialDataDecryptedObject,
	env: Environment,
	command?: string,
): SharingDecision {
	const sharing = (credentials.rateLimitSharing ?? 'automatic') as RateLimitSharing;
	if (sharing === 'process') return {};
	if (sharing === 'redis') return credentialRedis(credentials);
	return queueModeRedis(env, command);
}

/**
 * Where the bucket of the credential's account lives, for this n8n process: its environment, and
 * the n8n command it runs (its first argument, as n8n reads it).
 */
export function sharingFor(credentials: ICredentialDataDecryptedObject): SharingDecision {
	return sharingDecision(credentials, process.env, process.argv[2]);
}
