/**
 * A throw-away PostgreSQL server for tests and benchmarks (Debian's `postgresql`, installed by
 * scripts/toolchain.sh's ensure_test_servers): a database cluster made for the occasion in a
 * temporary folder, served on its own port of 127.0.0.1 and on a socket in that folder, without
 * fsync (nothing in it has to survive a crash), with one database owned by a user who logs in with
 * a password over TCP, as n8n connects in production.
 *
 *   const postgres = await startPostgres();
 *   postgres.port / postgres.database / postgres.user / postgres.password
 *   await postgres.query('SELECT count(*) FROM execution_entity') ... postgres.stop();
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import {
	describeExit,
	freePort,
	runCommand,
	sleep,
	tail,
	track,
	untrack,
	type ProcessUser,
} from './n8n/processes';

export interface PostgresServer {
	port: number;
	database: string;
	user: string;
	password: string;
	/** Runs `sql` as the database's user (psql over TCP); its rows, each the list of its values. */
	query(sql: string): Promise<string[][]>;
	stop(): Promise<void>;
}

const DATABASE = 'n8n';
const USER = 'n8n';
/** It protects nothing: the server listens on loopback only, for as long as one test run. */
const LOCAL_ONLY_PASSWORD = 'n8n-local-test-only';
/** The superuser initdb makes; the socket trusts it, to create the database and its user. */
const SUPERUSER = 'postgres';
/** The user Debian's package makes, who runs PostgreSQL when this process is root. */
const SERVER_ACCOUNT = 'postgres';
const START_TIMEOUT_MS = 30_000;
const INSTALL_HINT = 'scripts/toolchain.sh ensure_test_servers installs PostgreSQL';

/**
 * The folder of PostgreSQL's programs. Debian keeps them off PATH, in
 * /usr/lib/postgresql/<version>/bin: the one pg_config names, else the newest version's. Elsewhere
 * (Homebrew) they are on PATH.
 */
function programsFolder(): string | undefined {
	const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
	const named = pgConfig.status === 0 ? pgConfig.stdout.trim() : '';
	if (named && existsSync(join(named, 'initdb'))) return named;
	const debian = '/usr/lib/postgresql';
	if (!existsSync(debian)) return undefined;
	const [newest] = readdirSync(debian)
		.filter((version) => existsSync(join(debian, version, 'bin', 'initdb')))
		.sort((a, b) => Number(b) - Number(a));
	return newest === undefined ? undefined : join(debian, newest, 'bin');
}

/** PostgreSQL refuses to run as root: as root, its programs run as the postgres user. */
function serverUser(): ProcessUser | undefined {
	if (process.getuid?.() !== 0) return undefined;
	const id = (flag: string) => spawnSync('id', [flag, SERVER_ACCOUNT], { encoding: 'utf8' });
	const [uid, gid] = [id('-u'), id('-g')];
	if (uid.status !== 0 || gid.status !== 0)
		throw new Error(
			`PostgreSQL refuses to run as root, and there is no user ${SERVER_ACCOUNT} to run it as (${INSTALL_HINT})`,
		);
	return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
}

/** Runs one of PostgreSQL's programs to its end; its output, or an error naming why not. */
type Program = (name: string, args: string[], env?: NodeJS.ProcessEnv) => Promise<string>;

/** PostgreSQL's programs (`path` names where each is), run in `cwd` as `user`. */
function programs(
	path: (name: string) => string,
	cwd: string,
	user: ProcessUser | undefined,
): Program {
	return async (name, args, env = {}) => {
		const result = await runCommand(path(name), args, {
			cwd,
			env: { ...process.env, ...env },
			user,
		}).catch((error: Error) => {
			throw new Error(`${name} did not run: ${error.message} (${INSTALL_HINT})`);
		});
		if (result.exitCode !== 0)
			throw new Error(`${name} failed (${describeExit(result)}):\n${tail(result.stderr)}`);
		return result.stdout;
	};
}

export async function startPostgres(): Promise<PostgresServer> {
	const user = serverUser();
	const dir = mkdtempSync(join(tmpdir(), 'pdi-postgres-'));
	if (user) chownSync(dir, user.uid, user.gid);
	const folder = programsFolder();
	const path = (name: string) => (folder ? join(folder, name) : name);
	const run = programs(path, dir, user);
	const data = join(dir, 'data');
	try {
		await run('initdb', [
			...['-D', data, '-U', SUPERUSER, '--encoding=UTF8', '--no-locale', '--no-sync'],
			...['--auth-local=trust', '--auth-host=scram-sha-256'],
		]);
	} catch (error) {
		rmSync(dir, { recursive: true, force: true });
		throw error;
	}
	const port = await freePort();
	const server = serve(path('postgres'), data, dir, port, user);
	const stop = async () => {
		await server.stop();
		rmSync(dir, { recursive: true, force: true });
	};
	const socket = ['-h', dir, '-p', String(port), '-U', SUPERUSER, '-d', 'postgres'];
	try {
		const deadline = Date.now() + START_TIMEOUT_MS;
		while (
			!(await run('pg_isready', socket).then(
				() => true,
				() => false,
			))
		) {
			const failure = server.failure();
			if (failure !== undefined || Date.now() > deadline)
				throw new Error(`postgres did not start: ${failure ?? 'no answer'} (${INSTALL_HINT})`);
			await sleep(100);
		}
		await run('psql', [
			...['-X', '-q', '-v', 'ON_ERROR_STOP=1', ...socket],
			...['-c', `CREATE ROLE ${USER} LOGIN PASSWORD '${LOCAL_ONLY_PASSWORD}'`],
			...['-c', `CREATE DATABASE ${DATABASE} OWNER ${USER}`],
		]);
	} catch (error) {
		await stop();
		throw error;
	}
	const query = async (sql: string) => {
		const output = await run(
			'psql',
			[
				...['-X', '-A', '-t', '-F', '\t', '-v', 'ON_ERROR_STOP=1'],
				...['-h', '127.0.0.1', '-p', String(port), '-U', USER, '-d', DATABASE, '-c', sql],
			],
			{ PGPASSWORD: LOCAL_ONLY_PASSWORD },
		);
		return output
			.split('\n')
			.filter((line) => line !== '')
			.map((line) => line.split('\t'));
	};
	return { port, database: DATABASE, user: USER, password: LOCAL_ONLY_PASSWORD, query, stop };
}

/**
 * The server (the program at `postgres`) on the cluster in `data`: loopback and a socket in `socketDir`. failure(): why it
 * ended or could not start, while it is not running.
 */
function serve(
	postgres: string,
	data: string,
	socketDir: string,
	port: number,
	user: ProcessUser | undefined,
): { failure(): string | undefined; stop(): Promise<void> } {
	const child: ChildProcess = spawn(
		postgres,
		[
			...['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', socketDir],
			...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
		],
		{
			cwd: socketDir,
			uid: user?.uid,
			gid: user?.gid,
			detached: true,
			stdio: ['ignore', 'ignore', 'pipe'],
		},
	);
	track(child);
	let stderr = '';
	child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
		stderr += chunk;
	});
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	let spawnError: Error | undefined;
	child.once('error', (error) => {
		spawnError = error;
	});
	const running = () => child.exitCode === null && child.signalCode === null && !spawnError;
	return {
		failure: () => (running() ? undefined : (spawnError?.message ?? tail(stderr))),
		async stop() {
			if (running()) {
				// SIGINT is PostgreSQL's fast shutdown (`pg_ctl stop -m fast`): open sessions are ended.
				child.kill('SIGINT');
				await exited;
			}
			untrack(child);
		},
	};
}
