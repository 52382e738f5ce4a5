/**
 * The install command the README gives is the one the n8n driver runs for every n8n the end-to-end
 * suite and `npm start` start (scripts/n8n/instance.ts), and it does what the README says of it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { installCommand, PROJECT_ROOT } from '../../../scripts/n8n/instance';

const TARBALL = 'n8n-nodes-product-data-integration-<version>.tgz';

function read(file: string): string {
	return readFileSync(join(PROJECT_ROOT, file), 'utf8');
}

describe('the install command', () => {
	test('the README and the installing guide give the command the driver runs', () => {
		expect(read('README.md')).toContain(
			installCommand('~/.n8n/nodes', `/path/to/${TARBALL}`).join(' '),
		);
		const guide = read('docs/installing-in-queue-mode.md');
		expect(guide).toContain(installCommand('~/.n8n/nodes', `/path/to/${TARBALL}`).join(' '));
		expect(guide).toContain(
			installCommand('/home/node/.n8n/nodes', `/home/node/.n8n/${TARBALL}`).join(' '),
		);
	});

	describe('run', () => {
		let folder: string;

		beforeAll(() => {
			folder = mkdtempSync(join(tmpdir(), 'install-command-'));
		});

		afterAll(() => {
			rmSync(folder, { recursive: true, force: true });
		});

		/** A package that names n8n-workflow as its peer, as this one does, packed. */
		function packedPeerPackage(): string {
			const source = join(folder, 'source');
			mkdirSync(source);
			writeFileSync(
				join(source, 'package.json'),
				JSON.stringify({
					name: 'n8n-nodes-install-check',
					version: '1.0.0',
					peerDependencies: { 'n8n-workflow': '*' },
				}),
			);
			writeFileSync(join(source, 'index.js'), 'module.exports = {};\n');
			const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', folder], {
				cwd: source,
				encoding: 'utf8',
			}).trim();
			return join(folder, name);
		}

		test('installs into the nodes folder it names, even below a package.json, and leaves the peer to n8n', () => {
			const tarball = packedPeerPackage();
			// A home with a package.json of its own: npm without --prefix would install there.
			const home = join(folder, 'home');
			mkdirSync(home);
			writeFileSync(join(home, 'package.json'), '{}\n');
			const nodesDir = join(home, '.n8n', 'nodes');

			const [command, ...args] = installCommand(nodesDir, tarball);
			execFileSync(command, args, { cwd: home, stdio: 'pipe' });

			expect(existsSync(join(nodesDir, 'node_modules', 'n8n-nodes-install-check'))).toBe(true);
			expect(existsSync(join(nodesDir, 'node_modules', 'n8n-workflow'))).toBe(false);
			expect(existsSync(join(home, 'node_modules'))).toBe(false);
			expect(JSON.parse(readFileSync(join(nodesDir, 'package.json'), 'utf8'))).toEqual({
				dependencies: { 'n8n-nodes-install-check': expect.stringMatching(/^file:/) },
			});
		}, 60_000);
	});
});
