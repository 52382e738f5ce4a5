import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const SCRIPTS = resolve(__dirname, '../../scripts');
const HOSTS = resolve(SCRIPTS, 'n8n-hosts.sh');

interface HostManifest {
	dependencies: Record<string, string>;
	overrides?: Record<string, string>;
}

interface HostLock {
	packages: Record<
		string,
		{ version?: string; dependencies?: Record<string, string>; extraneous?: boolean }
	>;
}

function readJson<T>(file: string): T {
	return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** Runs `command` of scripts/n8n-hosts.sh with `args`: its exit status, stdout and stderr. */
function hosts(
	command: string,
	...args: string[]
): { status: number | null; stdout: string; stderr: string } {
	return spawnSync('bash', ['-c', 'source "$0" && "$@"', HOSTS, command, ...args], {
		encoding: 'utf8',
	});
}

const hostFolders = readdirSync(SCRIPTS).filter((name) => /^n8n-host(-.+)?$/.test(name));
const pinned = readJson<HostManifest>(join(SCRIPTS, 'n8n-host', 'package.json')).dependencies.n8n;

describe('the n8n versions the package is tested in', () => {
	test('no version and the pinned version install from scripts/n8n-host, another from its own host folder', () => {
		expect(hosts('n8n_host_folder').stdout.trim()).toBe(join(SCRIPTS, 'n8n-host'));
		expect(hosts('n8n_host_folder', pinned).stdout.trim()).toBe(join(SCRIPTS, 'n8n-host'));
		for (const folder of hostFolders.filter((name) => name !== 'n8n-host')) {
			const version = folder.slice('n8n-host-'.length);
			expect(hosts('n8n_host_folder', version).stdout.trim()).toBe(join(SCRIPTS, folder));
		}
	});

	test('a version without a host folder is refused, naming the versions that have one', () => {
		const run = hosts('n8n_host_folder', '2.0.0');
		expect(run.status).not.toBe(0);
		expect(run.stdout).toBe('');
		expect(run.stderr).toContain('No host folder pins n8n 2.0.0');
		for (const version of hosts('matrix_versions').stdout.trim().split('\n'))
			expect(run.stderr).toContain(version);
	});

	test('the matrix is the pinned version and one more per host folder', () => {
		const versions = hosts('matrix_versions').stdout.trim().split('\n');
		expect(versions[0]).toBe(pinned);
		expect(versions).toHaveLength(hostFolders.length);
		expect(hostFolders.length).toBeGreaterThan(1);
	});

	test.each(hostFolders)(
		'%s pins the n8n its name says, as released, and locks exactly that n8n',
		(folder) => {
			const manifest = readJson<HostManifest>(join(SCRIPTS, folder, 'package.json'));
			const lock = readJson<HostLock>(join(SCRIPTS, folder, 'package-lock.json'));
			const version = manifest.dependencies.n8n;
			if (folder !== 'n8n-host') expect(folder).toBe(`n8n-host-${version}`);
			expect(manifest.dependencies).toEqual({ n8n: version });
			// The one override every n8n 2.x needs here: linkedom's newest patch wants a package the
			// registry lacks. Any other would make it an n8n nobody runs.
			expect(manifest.overrides).toEqual({ linkedom: '0.18.14' });
			expect(lock.packages[''].dependencies).toEqual({ n8n: version });
			expect(lock.packages['node_modules/n8n'].version).toBe(version);
			// npm installs no package its lock marks extraneous, so scripts/install-n8n.sh would find it
			// missing from the install and refuse it.
			const extraneous = Object.entries(lock.packages).filter(([, entry]) => entry.extraneous);
			expect(extraneous.map(([path]) => path)).toEqual([]);
		},
	);
});
