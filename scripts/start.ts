/**
 * `npm start` (through scripts/start.sh, which puts Node 24 and the project's dependencies in
 * place): the package in a real n8n next to the emulator of the service. Builds and packs the
 * package, installs n8n (cached), installs the package into a demo n8n user folder the way a user
 * installs a community node, starts the emulator, imports a credential for it and the workflows of
 * examples/, starts n8n on 127.0.0.1 and sets up a local owner, then stays in the foreground:
 * Ctrl-C stops n8n and the emulator.
 *
 * The demo folder is kept between runs, so that what is built in the editor survives a restart; the
 * package, the credential and the examples are installed again on every start (an example replaces
 * its earlier copy). `npm start -- --reset` starts from an empty folder.
 *
 * Environment: N8N_PORT (default 5678); N8N_DEMO_FOLDER (default: a folder in the per-user cache,
 * outside the project, see scripts/n8n/instance.ts); the emulator's EMULATOR_* variables
 * (scripts/emulator/README.md), e.g. EMULATOR_PORT (8470) or EMULATOR_PROCESSING_MS.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
	closeSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readdirSync,
	readFileSync,
	rmSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import { EMULATOR_CREDENTIAL, emulatorCredential } from './n8n/credential';
import { installN8n, n8nVersion, N8nFolder, packPackage, PROJECT_ROOT } from './n8n/instance';
import { killGroup, sleep, tail, track, untrack } from './n8n/processes';
import type { N8nServer, Owner, WorkflowDefinition } from './n8n/server';

/** Local demo values, printed for the user like the emulator's demo account. */
const DEMO_OWNER: Owner = {
	email: 'demo@example.com',
	password: 'Demo-password-1',
	firstName: 'Demo',
	lastName: 'Owner',
};

const EMULATOR_START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

interface EmulatorReady {
	productionUrl: string;
	testUrl: string;
	username: string;
	password: string;
}

function say(message: string): void {
	process.stdout.write(`==> ${message}\n`);
}

function parseArguments(args: string[]): { reset: boolean } {
	let reset = false;
	for (const arg of args) {
		if (arg === '--reset') reset = true;
		else throw new UsageError('usage: npm start [-- --reset]');
	}
	return { reset };
}

class UsageError extends Error {}

/** Fails early and plainly, instead of after the build, when another program holds the port. */
async function assertPortFree(port: number): Promise<void> {
	await new Promise<void>((resolve, reject) => {
		const server = createServer();
		server.once('error', () =>
			reject(
				new Error(
					`Port ${port} on 127.0.0.1 is in use: stop what listens there or choose another with N8N_PORT.`,
				),
			),
		);
		server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
	});
}

function cacheRoot(): string {
	return join(
		process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
		'n8n-nodes-product-data-integration',
	);
}

/** The emulator (`npm run emulator`) as its own process, logging to `logFile`; ready when resolved. */
async function startEmulator(
	work: string,
	logFile: string,
): Promise<{ child: ChildProcess; ready: EmulatorReady }> {
	const readyFile = join(work, 'emulator.json');
	const log = openSync(logFile, 'w');
	const child = spawn(
		process.execPath,
		['--import', 'tsx', join(PROJECT_ROOT, 'scripts', 'emulator', 'cli.ts')],
		{
			cwd: PROJECT_ROOT,
			env: { ...process.env, EMULATOR_READY_FILE: readyFile },
			detached: true,
			stdio: ['ignore', log, log],
		},
	);
	closeSync(log);
	track(child);
	const deadline = Date.now() + EMULATOR_START_TIMEOUT_MS;
	while (!existsSync(readyFile)) {
		if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
			throw new Error(`The emulator did not start.\n${tail(readFileSync(logFile, 'utf8'))}`);
		}
		await sleep(100);
	}
	return { child, ready: JSON.parse(readFileSync(readyFile, 'utf8')) as EmulatorReady };
}

/** SIGTERM and up to 30 s to exit, then SIGKILL for its whole process group. */
async function stopEmulator(child: ChildProcess): Promise<void> {
	if (child.exitCode === null && child.signalCode === null) {
		process.stderr.write('Stopping the emulator\n');
		const exited = new Promise((resolve) => child.once('exit', resolve));
		child.kill('SIGTERM');
		const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS);
		await exited;
		clearTimeout(timer);
	}
	killGroup(child, 'SIGKILL');
	untrack(child);
}

/**
 * The workflows of examples/. One without an id gets one derived from its file name, so that every
 * start replaces it instead of adding a copy.
 */
function readExamples(): Array<WorkflowDefinition & { id: string }> {
	const dir = join(PROJECT_ROOT, 'examples');
	return readdirSync(dir)
		.filter((file) => file.endsWith('.json'))
		.sort()
		.map((file) => {
			const workflow = JSON.parse(readFileSync(join(dir, file), 'utf8')) as WorkflowDefinition;
			return {
				...workflow,
				id: workflow.id ?? createHash('sha1').update(basename(file)).digest('hex').slice(0, 16),
			};
		});
}

async function main(): Promise<void> {
	const { reset } = parseArguments(process.argv.slice(2));
	const port = Number(process.env.N8N_PORT || 5678);
	const demo = process.env.N8N_DEMO_FOLDER || join(cacheRoot(), 'demo');
	await assertPortFree(port);

	const work = mkdtempSync(join(tmpdir(), 'pdi-start-'));
	let emulator: ChildProcess | undefined;
	let server: N8nServer | undefined;
	let stopping: Promise<void> | undefined;
	const stop = (): Promise<void> => {
		stopping ??= (async () => {
			if (server) {
				process.stderr.write('Stopping n8n\n');
				await server.stop();
			}
			if (emulator) await stopEmulator(emulator);
			rmSync(work, { recursive: true, force: true });
		})();
		return stopping;
	};
	const exitOn = (signal: NodeJS.Signals, code: number) =>
		process.on(signal, () => {
			void stop().finally(() => process.exit(code));
		});
	exitOn('SIGINT', 130);
	exitOn('SIGTERM', 143);
	exitOn('SIGHUP', 129);

	try {
		say('Build and pack the package');
		const tarball = packPackage(work);
		const { name, version } = JSON.parse(
			readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'),
		) as {
			name: string;
			version: string;
		};

		say('n8n');
		const n8nBin = await installN8n();

		if (reset && existsSync(demo)) {
			say(`Reset the demo folder ${demo}`);
			rmSync(demo, { recursive: true, force: true });
		}
		mkdirSync(demo, { recursive: true });
		say(`Install ${name} ${version} into ${demo}/.n8n/nodes`);
		const folder = await N8nFolder.create(n8nBin, demo, tarball);

		say('Start the emulator');
		const started = await startEmulator(work, join(demo, 'emulator.log'));
		emulator = started.child;
		const { ready } = started;

		say('Import the emulator credential');
		await folder.importCredentials([emulatorCredential(ready.productionUrl, ready)]);
		const examples = readExamples();
		if (examples.length > 0) {
			say(`Import ${examples.length} example workflow(s) from examples/`);
			await folder.importWorkflows(examples);
		}

		say(`Start n8n ${n8nVersion(n8nBin)} on http://127.0.0.1:${port}`);
		server = await folder.start({ port, logFile: join(demo, 'n8n.log') });
		const owner = await server.ensureOwner(DEMO_OWNER);
		// n8n imports every workflow inactive: those marked active are published.
		const published = examples.filter((example) => example.active === true);
		for (const example of published) await server.activateWorkflow(example.id);

		const login = `${DEMO_OWNER.email} / ${DEMO_OWNER.password}`;
		process.stdout.write(
			[
				'',
				`n8n ${n8nVersion(n8nBin)} with ${name} ${version} is ready.`,
				`  editor:     ${server.url}`,
				`  login:      ${owner === 'created' ? login : `${login} (the owner of an earlier start; --reset makes it again)`}`,
				`  emulator:   ${ready.productionUrl} (production), ${ready.testUrl} (development/test)`,
				`              user ${ready.username} / ${ready.password}, in n8n as the credential "${EMULATOR_CREDENTIAL.name}"`,
				`  workflows:  ${examples.length} example(s) from examples/, ${published.length} of them published`,
				`  demo data:  ${demo} (n8n.log, emulator.log)`,
				'Press Ctrl-C to stop.',
				'',
			].join('\n'),
		);

		// npm, told to stop with SIGTERM, may end without passing it on: the demo notices its parent
		// going away too, or n8n would be left running.
		const parent = process.ppid;
		let ended = false;
		void server.stopped.then(() => (ended = true));
		while (!ended) {
			if (process.ppid !== parent) {
				process.stderr.write('The process that started the demo is gone: stopping.\n');
				await stop();
				process.exit(143);
			}
			await sleep(1000);
		}
		process.stderr.write(`n8n stopped on its own.\n${tail(server.log())}\n`);
		await stop();
		process.exit(1);
	} catch (error) {
		await stop();
		throw error;
	}
}

main().catch((error: unknown) => {
	process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(error instanceof UsageError ? 2 : 1);
});
