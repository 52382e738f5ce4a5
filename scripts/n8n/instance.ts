/**
 * A real n8n with the package installed the way a user installs it, driven from TypeScript: the one
 * driver behind `npm start`, the end-to-end suite and the benchmarks that need a real n8n.
 *
 *   const n8nBin = await installN8n();                         // the pinned n8n, cached per user
 *                                                              // (installN8n('2.38.4'): one of the version matrix)
 *   const tarball = packPackage(dir);                          // built from clean, as npm publishes it
 *   const folder = await N8nFolder.create(n8nBin, path, tarball);   // user folder, package in .n8n/nodes
 *   // folder.withDatabase(postgresDatabase(postgres)): its n8n on PostgreSQL (scripts/postgres.ts), not SQLite
 *   await folder.importCredentials([credential]);              // CLI commands: before start() only
 *   const server = await folder.start();                       // `n8n start`, ready, on free ports
 *   await server.ensureOwner(OWNER);                           // then its REST API (./server.ts)
 *
 * The folder must lie outside the project: from inside it, the package would resolve n8n-workflow
 * from the project's node_modules instead of n8n's own, which no user's n8n does.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
	closeSync,
	copyFileSync,
	cpSync,
	existsSync,
	mkdirSync,
	openSync,
	readdirSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';

import type { PostgresServer } from '../postgres';
import { describeExit, freePort, runCommand, tail, track, type CommandResult } from './processes';
import { N8nServer } from './server';

export const PROJECT_ROOT = resolve(__dirname, '..', '..');

const INSTALL_TIMEOUT_MS = 30 * 60_000;

/**
 * Installs the pinned n8n, or `version` of the version matrix (scripts/install-n8n.sh, cached per
 * user); the path of its executable.
 */
export async function installN8n(version?: string): Promise<string> {
	const install = await runCommand(
		'bash',
		[join(PROJECT_ROOT, 'scripts', 'install-n8n.sh'), ...(version ? [version] : [])],
		{
			echoStderr: true,
			timeoutMs: INSTALL_TIMEOUT_MS,
		},
	);
	if (install.exitCode !== 0)
		throw new Error(
			`scripts/install-n8n.sh failed (${describeExit(install)})\n${tail(install.stderr)}`,
		);
	const n8nBin = install.stdout.trim().split('\n').pop() ?? '';
	if (!existsSync(n8nBin))
		throw new Error(`scripts/install-n8n.sh printed no n8n executable: "${n8nBin}"`);
	// A result that names a version must come from that version, not from whatever was installed.
	if (version && n8nVersion(n8nBin) !== version) {
		throw new Error(`scripts/install-n8n.sh ${version} installed n8n ${n8nVersion(n8nBin)}`);
	}
	return n8nBin;
}

/** The version of the n8n at `n8nBin`. */
export function n8nVersion(n8nBin: string): string {
	const manifest = join(dirname(dirname(n8nBin)), 'n8n', 'package.json');
	return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * Builds the package (from clean: `npm run build` empties dist first) and packs it as npm publishes
 * it into `destination`; the tarball's path. Build output goes to stderr.
 */
export function packPackage(destination: string): string {
	const run = (command: string, args: string[]) => {
		const result = spawnSync(command, args, { cwd: PROJECT_ROOT, stdio: ['ignore', 2, 2] });
		if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`);
	};
	run('npm', ['run', 'build', '--silent']);
	mkdirSync(destination, { recursive: true });
	run('npm', ['pack', '--pack-destination', destination, '--silent']);
	const tarball = readdirSync(destination).find((name) => name.endsWith('.tgz'));
	if (!tarball) throw new Error('npm pack produced no tarball');
	return join(destination, tarball);
}

/**
 * The command that installs a package's tarball into the n8n nodes folder `nodesDir`, word by word
 * as the README gives it: `--prefix` keeps npm in that folder (made if missing; without it, npm
 * installs into the nearest folder above that holds a package.json), and `--legacy-peer-deps` leaves
 * n8n-workflow, the package's peer, to n8n's own copy instead of installing a second one beside it.
 */
export function installCommand(nodesDir: string, tarball: string): string[] {
	return ['npm', 'install', '--prefix', nodesDir, '--legacy-peer-deps', tarball];
}

/**
 * A fixed key, so that credentials imported by one n8n command can be read by the next one, across
 * starts of the demo and within a test. It protects nothing: it is published here, for local use only.
 */
const LOCAL_ONLY_PUBLISHED_ENCRYPTION_KEY = 'n8n-nodes-product-data-integration-local-demo-only';

/**
 * The environment of an n8n command: this process's, plus a local, offline n8n with its data in
 * `<userFolder>/.n8n`, its editor and REST API on 127.0.0.1:<port> and its task-runner broker on
 * <brokerPort> (two n8n processes at once, even an `n8n execute`, each need their own).
 */
function n8nEnvironment(userFolder: string, port: number, brokerPort: number): NodeJS.ProcessEnv {
	return {
		...process.env,
		N8N_USER_FOLDER: userFolder,
		N8N_PORT: String(port),
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		N8N_ENCRYPTION_KEY: LOCAL_ONLY_PUBLISHED_ENCRYPTION_KEY,
		// n8n refuses to load nodes under NODE_ENV=test, which test runners set; production is what
		// n8n's own container image runs with.
		NODE_ENV: 'production',
		N8N_HOST: '127.0.0.1',
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		// No calls home: telemetry (and with it the editor's banners), the version and what's-new
		// notices, templates, and the catalogue of verified community nodes, which the editor's
		// node panel asks for (a stack trace in the log for every ask when the internet is out of
		// reach). An installed community package, such as this one, loads all the same.
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_WHATS_NEW_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		// Plain http on loopback: a secure cookie would never be sent back.
		N8N_SECURE_COOKIE: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		DB_SQLITE_POOL_SIZE: '1',
		// Its start-up job fetches a registry from the internet and logs a stack trace when it cannot.
		N8N_DISABLED_MODULES: 'mcp-registry',
	};
}

export interface StartOptions {
	/** n8n's port; a free one unless given. */
	port?: number;
	/** More environment for n8n, e.g. another execution mode. */
	env?: NodeJS.ProcessEnv;
	/** Where n8n's output goes; a new file in the user folder unless given. */
	logFile?: string;
	/**
	 * `worker`: a queue-mode worker (needs EXECUTIONS_MODE=queue and n8n's Redis settings in
	 * `env`); `port` is then its health server's, which tells when it is ready.
	 */
	command?: 'start' | 'worker';
	/** More arguments for the command, e.g. `--concurrency=2` for a worker. */
	args?: string[];
}

/**
 * n8n's settings for a database of `postgres` instead of the SQLite file in its user folder, as
 * n8n's documentation asks of queue mode.
 */
export function postgresDatabase(postgres: PostgresServer): NodeJS.ProcessEnv {
	return {
		DB_TYPE: 'postgresdb',
		DB_POSTGRESDB_HOST: '127.0.0.1',
		DB_POSTGRESDB_PORT: String(postgres.port),
		DB_POSTGRESDB_DATABASE: postgres.database,
		DB_POSTGRESDB_USER: postgres.user,
		DB_POSTGRESDB_PASSWORD: postgres.password,
	};
}

/** An n8n user folder (`<path>/.n8n`) with the package installed. */
export class N8nFolder {
	constructor(
		readonly n8nBin: string,
		readonly path: string,
		/**
		 * n8n's database settings for every command and start in this folder (postgresDatabase());
		 * none: the SQLite file in the folder.
		 */
		readonly database: NodeJS.ProcessEnv = {},
	) {}

	/** This folder with its n8n on another database (postgresDatabase()). */
	withDatabase(database: NodeJS.ProcessEnv): N8nFolder {
		return new N8nFolder(this.n8nBin, this.path, database);
	}

	/**
	 * The user folder at `path` (new, or kept from an earlier start) with the package of `tarball`
	 * installed into `.n8n/nodes` by the README's command (installCommand); an older copy of the
	 * package is replaced.
	 */
	static async create(n8nBin: string, path: string, tarball: string): Promise<N8nFolder> {
		const nodesDir = join(path, '.n8n', 'nodes');
		// Every build has the same version number: drop the old copy so that npm cannot keep it.
		const { name } = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
			name: string;
		};
		rmSync(join(nodesDir, 'node_modules', name), { recursive: true, force: true });
		// Kept in the folder: the nodes folder's package.json refers to it, and a later install there
		// (the next start of the demo) reads it again.
		mkdirSync(path, { recursive: true });
		const kept = join(path, basename(tarball));
		if (resolve(tarball) !== kept) copyFileSync(tarball, kept);
		const [command, ...args] = installCommand(nodesDir, kept);
		const npm = await runCommand(command, args, { cwd: path });
		if (npm.exitCode !== 0)
			throw new Error(`npm install of the package failed:\n${tail(npm.stdout + npm.stderr)}`);
		return new N8nFolder(n8nBin, path);
	}

	/**
	 * A copy of this folder at `path` (e.g. of a prepared one, instead of preparing it again), on
	 * the copy of its SQLite file: a database elsewhere is not copied.
	 */
	copyTo(path: string): N8nFolder {
		cpSync(this.path, path, { recursive: true, verbatimSymlinks: true });
		return new N8nFolder(this.n8nBin, path);
	}

	/**
	 * Runs an n8n CLI command in this folder; throws on a non-zero exit code unless `allowFailure`.
	 * CLI commands share the database of `n8n start`: run them before start() or after stop().
	 */
	async n8n(
		args: string[],
		{ allowFailure = false }: { allowFailure?: boolean } = {},
	): Promise<CommandResult> {
		const env = {
			...n8nEnvironment(this.path, await freePort(), await freePort()),
			...this.database,
		};
		// The n8n executable is a Node script: run it with this Node (24, from scripts/toolchain.sh).
		const result = await runCommand(process.execPath, [this.n8nBin, ...args], {
			cwd: this.path,
			env,
		});
		if (!allowFailure && result.exitCode !== 0) {
			throw new Error(
				`n8n ${args.join(' ')} failed (${describeExit(result)}):\n${tail(result.stdout + result.stderr)}`,
			);
		}
		return result;
	}

	/** `n8n import:credentials`: each keeps its id; `data` in clear text, n8n encrypts it. */
	async importCredentials(credentials: unknown[]): Promise<void> {
		await this.n8n([
			'import:credentials',
			`--input=${this.writeImportFile('credentials', credentials)}`,
		]);
	}

	/** `n8n import:workflow`: each keeps its id, a workflow with the same id is replaced. */
	async importWorkflows(workflows: Array<{ id: string }>): Promise<void> {
		const dir = join(this.path, 'import', `workflows-${Date.now()}`);
		mkdirSync(dir, { recursive: true });
		for (const workflow of workflows)
			writeFileSync(join(dir, `${workflow.id}.json`), JSON.stringify(workflow));
		const result = await this.n8n(['import:workflow', '--separate', `--input=${dir}`]);
		// n8n skips a file it cannot read as a workflow with a warning: none may go missing.
		if (!result.stdout.includes(`Successfully imported ${workflows.length} workflow`)) {
			throw new Error(`n8n did not import every workflow:\n${tail(result.stdout + result.stderr)}`);
		}
	}

	/** `n8n start` on 127.0.0.1, ready (GET /healthz/readiness = 200) when the promise resolves. */
	async start({
		port,
		env = {},
		logFile,
		command = 'start',
		args = [],
	}: StartOptions = {}): Promise<N8nServer> {
		const serverPort = port ?? (await freePort());
		const log = logFile ?? join(this.path, `n8n-${command}-${Date.now()}.log`);
		const output = openSync(log, 'a');
		const health =
			command === 'worker'
				? {
						QUEUE_HEALTH_CHECK_ACTIVE: 'true',
						QUEUE_HEALTH_CHECK_PORT: String(serverPort),
						N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
					}
				: {};
		const child = spawn(process.execPath, [this.n8nBin, command, ...args], {
			cwd: this.path,
			env: {
				...n8nEnvironment(this.path, serverPort, await freePort()),
				...this.database,
				...health,
				...env,
			},
			// Its own process group: stopping it also ends the task runner it starts.
			detached: true,
			stdio: ['ignore', output, output],
		});
		closeSync(output);
		track(child);
		const server = new N8nServer(`http://127.0.0.1:${serverPort}`, log, this.loadFlatted(), child);
		try {
			await server.waitUntilReady();
		} catch (error) {
			await server.stop();
			throw error;
		}
		return server;
	}

	private writeImportFile(name: string, content: unknown): string {
		const dir = join(this.path, 'import');
		mkdirSync(dir, { recursive: true });
		const file = join(dir, `${name}-${Date.now()}.json`);
		writeFileSync(file, JSON.stringify(content, null, '\t'));
		return file;
	}

	/** The client of an n8n already running on this folder (started by another process). */
	attach(url: string, logFile: string): N8nServer {
		return new N8nServer(url, logFile, this.loadFlatted());
	}

	// The REST API hands execution data out in `flatted` form; n8n's own copy decodes it.
	private loadFlatted(): (text: string) => unknown {
		const n8nPackage = join(dirname(dirname(this.n8nBin)), 'n8n', 'package.json');
		const flatted = createRequire(n8nPackage)('flatted') as { parse(text: string): unknown };
		return (text) => flatted.parse(text);
	}
}
