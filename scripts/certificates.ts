/**
 * Certificates made for a test: an authority of its own and a server certificate it signed, as a
 * company's private CA signs its hosts (openssl, which scripts/toolchain.sh's ensure_test_servers
 * installs).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

function openssl(dir: string, args: string[]): void {
	const result = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
	if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
}

/**
 * A certificate authority named `authority` (ca.crt, ca.key) and a server certificate it signed
 * (server.crt, server.key), valid for 127.0.0.1 and the host names given (localhost), written into
 * `dir`.
 */
export function makeCertificates(dir: string, authority: string, hostNames = ['localhost']): void {
	openssl(dir, [
		'req',
		'-x509',
		'-newkey',
		'rsa:2048',
		'-nodes',
		'-keyout',
		'ca.key',
		'-out',
		'ca.crt',
		'-days',
		'2',
		'-subj',
		`/CN=${authority}`,
	]);
	openssl(dir, [
		'req',
		'-newkey',
		'rsa:2048',
		'-nodes',
		'-keyout',
		'server.key',
		'-out',
		'server.csr',
		'-subj',
		'/CN=localhost',
	]);
	const names = hostNames.map((name) => `DNS:${name}`).join(',');
	writeFileSync(join(dir, 'san.ext'), `subjectAltName=${names},IP:127.0.0.1\n`);
	openssl(dir, [
		'x509',
		'-req',
		'-in',
		'server.csr',
		'-CA',
		'ca.crt',
		'-CAkey',
		'ca.key',
		'-CAcreateserial',
		'-out',
		'server.crt',
		'-days',
		'2',
		'-extfile',
		'san.ext',
	]);
}
