/**
 * Another n8n process that takes one node in the queue's Redis and then does nothing, so that a
 * test can kill it as a crashed worker:
 * `node --import tsx test/helpers/runLockHolder.ts <lease ms> <workflow id, newline, node id>`,
 * with the queue's Redis in QUEUE_BULL_REDIS_PORT and _PASSWORD. It prints `held` once it holds
 * the node (`busy` or `unavailable` if not, with the reason on stderr).
 */
import { RedisRunLock } from '../../nodes/shared/fullEdition/redisRunLock';
import { storeFor } from '../../nodes/shared/fullEdition/sharedRegistry';

async function main(): Promise<void> {
	const [leaseMs, node] = process.argv.slice(2);
	const store = storeFor({
		host: '127.0.0.1',
		port: Number(process.env.QUEUE_BULL_REDIS_PORT),
		db: 0,
		password: process.env.QUEUE_BULL_REDIS_PASSWORD,
	});
	const silent = () => undefined;
	const lease = await new RedisRunLock(store, Number(leaseMs)).take({
		node,
		holdMs: Infinity,
		logger: {
			debug: silent,
			info: silent,
			warn: (message: string) => process.stderr.write(`${message}\n`),
			error: silent,
		},
	});
	process.stdout.write(
		`${lease === undefined ? 'unavailable' : lease === 'busy' ? 'busy' : 'held'}\n`,
	);
	// Renews its lease until the test kills it.
	setInterval(silent, 60_000);
}

void main();
