/**
 * A throw-away forward proxy for tests (Debian's `tinyproxy`, installed by scripts/toolchain.sh's
 * ensure_test_servers): its own port on 127.0.0.1, optionally with Basic authentication, every
 * request it passes on in its log.
 *
 *   const proxy = await startProxy({ user: 'staff', password: 'secret' });
 *   proxy.url / proxy.requests() ... proxy.stop();
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { accepts, freePort, sleep } from './n8n/processes';

export interface ProxyServerOptions {
	user?: string;
	password?: string;
}

export interface ProxyServer {
	/** The proxy's URL, with its user name and password when it asks for them. */
	url: string;
	port: number;
	/** The requests it was asked to pass on, as its log names them: "GET http://host/path", "CONNECT host:443". */
	requests(): string[];
	stop(): Promise<void>;
}

const START_TIMEOUT_MS = 10_000;

/** The variables n8n reads its proxy from (each lowercase first): a test clears them before its own. */
export const PROXY_VARIABLES = [
	'http_proxy',
	'HTTP_PROXY',
	'https_proxy',
	'HTTPS_PROXY',
	'no_proxy',
	'NO_PROXY',
];

export async function startProxy(options: ProxyServerOptions = {}): Promise<ProxyServer> {
	const dir = mkdtempSync(join(tmpdir(), 'proxy-'));
	const port = await freePort();
	const log = join(dir, 'proxy.log');
	const auth =
		options.user !== undefined ? [`BasicAuth ${options.user} ${options.password ?? ''}`] : [];
	writeFileSync(
		join(dir, 'tinyproxy.conf'),
		[
			`Port ${port}`,
			'Listen 127.0.0.1',
			'Timeout 30',
			`LogFile "${log}"`,
			'LogLevel Connect',
			'MaxClients 50',
			'DisableViaHeader Yes',
			...auth,
			'',
		].join('\n'),
	);
	writeFileSync(log, '');
	let exited = false;
	let spawnError: Error | undefined;
	const child: ChildProcess = spawn('tinyproxy', ['-d', '-c', join(dir, 'tinyproxy.conf')], {
		stdio: 'ignore',
	});
	child.once('error', (error) => (spawnError = error));
	child.once('exit', () => (exited = true));
	const startedBy = Date.now() + START_TIMEOUT_MS;
	while (!(await accepts(port))) {
		if (exited || spawnError || Date.now() > startedBy) {
			child.kill('SIGKILL');
			rmSync(dir, { recursive: true, force: true });
			throw new Error(
				`tinyproxy did not start: ${spawnError?.message ?? 'no answer on its port'} (scripts/toolchain.sh ensure_test_servers installs it)`,
			);
		}
		await sleep(50);
	}
	const credentials =
		options.user !== undefined
			? `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password ?? '')}@`
			: '';
	return {
		url: `http://${credentials}127.0.0.1:${port}`,
		port,
		requests: () =>
			[...readFileSync(log, 'utf8').matchAll(/Request \(file descriptor \d+\): (\S+) (\S+) /g)].map(
				([, method, target]) => `${method} ${target}`,
			),
		stop: async () => {
			if (!exited) {
				const gone = new Promise((resolve) => child.once('exit', resolve));
				child.kill('SIGTERM');
				await gone;
			}
			rmSync(dir, { recursive: true, force: true });
		},
	};
}
