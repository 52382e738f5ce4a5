/**
 * A throw-away redis-server for tests, benchmarks and the demo (Debian's `redis-server`, installed
 * by scripts/toolchain.sh's ensure_test_servers or ensure_redis_server): its own port, no
 * persistence, optionally a password and TLS with a certificate authority made for the occasion.
 *
 *   const redis = await startRedis({ password: 'secret', tls: true });
 *   redis.port / redis.tlsPort / redis.ca (PEM) ... redis.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { makeCertificates } from './certificates';
import { accepts, freePort } from './n8n/processes';

export interface RedisServerOptions {
	password?: string;
	/** Also listen with TLS (server certificate for localhost and 127.0.0.1). */
	tls?: boolean;
	/** Listen on this port instead of a free one (to restart a server where it was). */
	port?: number;
}

export interface RedisServer {
	port: number;
	tlsPort?: number;
	/** PEM of the authority that signed the server's certificate. */
	ca?: string;
	password?: string;
	stop(): Promise<void>;
}

export async function startRedis(options: RedisServerOptions = {}): Promise<RedisServer> {
	const dir = mkdtempSync(join(tmpdir(), 'pdi-redis-'));
	const port = options.port ?? (await freePort());
	const args = [
		'--port',
		String(port),
		'--bind',
		'127.0.0.1',
		'--save',
		'',
		'--appendonly',
		'no',
		'--dir',
		dir,
		'--loglevel',
		'warning',
	];
	if (options.password) args.push('--requirepass', options.password);
	let tlsPort: number | undefined;
	let ca: string | undefined;
	if (options.tls) {
		makeCertificates(dir, 'Test Redis CA');
		tlsPort = await freePort();
		ca = readFileSync(join(dir, 'ca.crt'), 'utf8');
		args.push(
			'--tls-port',
			String(tlsPort),
			'--tls-cert-file',
			join(dir, 'server.crt'),
			'--tls-key-file',
			join(dir, 'server.key'),
			'--tls-ca-cert-file',
			join(dir, 'ca.crt'),
			'--tls-auth-clients',
			'no',
		);
	}
	const child: ChildProcess = spawn('redis-server', args, { stdio: ['ignore', 'ignore', 'pipe'] });
	let stderr = '';
	child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
		stderr += chunk;
	});
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	let spawnError: Error | undefined;
	child.once('error', (error) => {
		spawnError = error;
	});
	const stop = async () => {
		if (child.exitCode === null && child.signalCode === null) {
			child.kill('SIGTERM');
			await exited;
		}
		rmSync(dir, { recursive: true, force: true });
	};
	const deadline = Date.now() + 10_000;
	while (!(await accepts(port))) {
		if (spawnError || child.exitCode !== null || Date.now() > deadline) {
			await stop();
			throw new Error(
				`redis-server did not start: ${spawnError?.message ?? stderr.trim()} (scripts/toolchain.sh ensure_redis_server installs it)`,
			);
		}
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	return { port, tlsPort, ca, password: options.password, stop };
}
