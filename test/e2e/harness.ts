/**
 * End-to-end harness: the packed package installed into a real n8n (the version pinned in
 * scripts/n8n-host), run through the n8n CLI and `n8n start`, against an emulator that lives in
 * the test's own process.
 *
 * Running: `npm run test:e2e` (scripts/e2e.sh) builds and packs the package, then runs every
 * `*.test.ts` under test/e2e with test/e2e/jest.config.js (the unit-test run leaves this folder
 * out), one file at a time; arguments go on to jest (`npm run test:e2e -- test/e2e/harness.test.ts`).
 * The global set-up installs n8n (cached by scripts/install-n8n.sh) and prepares, once per run, an
 * n8n user folder with the package installed the way a user installs it (`npm install <tgz>` in
 * `.n8n/nodes`) and the database migrated; every prepareN8n() starts from a copy of it.
 * `E2E_KEEP_FOLDERS=1` keeps the user folders (database, logs) for a look.
 *
 *   import { EMULATOR_CREDENTIAL, nodeItems, nodeType, prepareN8n, type N8nHarness } from './harness';
 *
 *   let n8n: N8nHarness;
 *   beforeAll(async () => { n8n = await prepareN8n({ emulator: { processingMs: 100 } }); });
 *   afterAll(async () => { await n8n?.stop(); });
 *
 *   test('uploads a document', async () => {
 *     const id = await n8n.importWorkflow(workflow);    // nodes of type nodeType('productDataIntegration'),
 *                                                       // credentials: { productDataIntegrationApi: EMULATOR_CREDENTIAL }
 *     const run = await n8n.executeWorkflow(id);        // `n8n execute --rawOutput`, must exit with 0
 *     expect(nodeItems(run, 'Upload')[0]).toMatchObject({ ... });
 *     expect(n8n.emulator.stats().uploads).toBe(1);
 *   });
 *
 * API
 * - prepareN8n({ emulator?, credential? }) -> N8nHarness: a fresh user folder (temporary), an
 *   emulator started in this process (scripts/emulator; `processingMs` 0 unless given) and the
 *   credential EMULATOR_CREDENTIAL (customer 1001 of the default account, `credential` overrides
 *   its fields) pointing at it.
 * - harness.userFolder, harness.emulator, harness.credential (the one imported last).
 * - harness.importCredential(credential): imports a credential, replacing one with the same id.
 * - harness.importWorkflow(workflow) -> id: imports a workflow object, giving it an id if it has
 *   none. Workflows for executeWorkflow need a Manual Trigger.
 * - harness.executeWorkflow(id, { expect: 'success' | 'failure' }) -> WorkflowRun: the run as
 *   `n8n execute --rawOutput` prints it; throws unless the exit code is 0 ('success', the default)
 *   or 1 ('failure'), naming the error of the run. About 3 s each.
 * - harness.publishWorkflow(id): `n8n publish:workflow`, for trigger workflows; only before
 *   startN8n(), as a running n8n does not see it. The CLI commands are meant for before startN8n()
 *   or after server.stop(): they share the server's SQLite database.
 * - harness.n8n(args, { allowFailure? }) -> CommandResult: any other n8n CLI command, with all of
 *   its output (stdout, stderr, exit code); throws on a non-zero exit code unless `allowFailure`.
 * - harness.startN8n() -> N8nServer: `n8n start` on free ports, ready (GET /healthz/readiness = 200),
 *   owner set up and logged in (OWNER).
 *   server.url; server.listExecutions({ workflowId?, status? }) -> ExecutionSummary[] (newest
 *   first); server.getExecution(id) -> StoredExecution (GET /rest/executions/:id, run data decoded);
 *   server.waitForExecutions({ workflowId, count?, status?, timeoutMs? }) -> finished executions,
 *   oldest first; server.request(method, path, body?) -> parsed JSON of any route; server.stop().
 * - harness.stop(): stops n8n (if started) and the emulator and removes the user folder.
 * - nodeItems(run, nodeName, { output?, runIndex? }) and runError(run) (./run-data) read a
 *   WorkflowRun or the `data` of a StoredExecution.
 * - nodeType(name): the type of one of the package's nodes in a workflow, e.g.
 *   'n8n-nodes-product-data-integration.productDataIntegration'.
 * Every n8n command gets its own free ports. The suite runs its files one at a time all the same:
 * an n8n process takes about 400 MB and a few seconds of CPU to start.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
	closeSync,
	cpSync,
	existsSync,
	mkdirSync,
	mkdtempSync,
	openSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

import type { ExecutionStatus, IRunExecutionData } from 'n8n-workflow';
import { request as httpRequest } from 'undici';

import { startEmulator, type Emulator, type EmulatorOptions } from '../../scripts/emulator';
import { emulatorCredential, type CredentialData, type CredentialImport } from './credential';
import { parseExecuteOutput, runError, tail, type WorkflowRun } from './run-data';

export { CREDENTIAL_TYPE, EMULATOR_CREDENTIAL, emulatorCredential } from './credential';
export type { CredentialData, CredentialImport } from './credential';
export { nodeItems, parseExecuteOutput, runError, type WorkflowRun } from './run-data';

export const PROJECT_ROOT = resolve(__dirname, '..', '..');

const PACKAGE_NAME = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string })
	.name;

/** The type of one of the package's nodes in a workflow, as n8n names a community node. */
export function nodeType(nodeName: string): string {
	return `${PACKAGE_NAME}.${nodeName}`;
}

/** The owner `startN8n()` sets up: local test values, like the encryption key of scripts/n8n-env.sh. */
export const OWNER = {
	email: 'owner@example.com',
	firstName: 'Test',
	lastName: 'Owner',
	password: 'Local-test-password-1',
} as const;

const COMMAND_TIMEOUT_MS = 5 * 60_000;
const INSTALL_TIMEOUT_MS = 30 * 60_000;
const START_TIMEOUT_MS = 3 * 60_000;
const STOP_TIMEOUT_MS = 30_000;

export interface WorkflowDefinition {
	id?: string;
	name: string;
	nodes: unknown[];
	connections: Record<string, unknown>;
	[key: string]: unknown;
}

export interface PrepareOptions {
	emulator?: EmulatorOptions;
	credential?: Partial<CredentialData>;
}

export interface CommandResult {
	exitCode: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
}

export interface ExecutionSummary {
	id: string;
	workflowId: string;
	mode: string;
	status: ExecutionStatus;
	createdAt: string;
	startedAt: string | null;
	stoppedAt: string | null;
}

export interface StoredExecution extends ExecutionSummary {
	finished: boolean;
	data: IRunExecutionData;
}

interface RunSettings {
	n8nBin: string;
	workDir: string;
	template: string;
}

// Processes still running; if the test process ends first, they go with it (whole process group:
// n8n starts a task runner of its own). The exit listener is there only while some are, as every
// test file loads this module anew.
const running = new Set<ChildProcess>();

function killRunning(): void {
	for (const child of running) killGroup(child, 'SIGKILL');
}

function track(child: ChildProcess): void {
	if (running.size === 0) process.on('exit', killRunning);
	running.add(child);
}

function untrack(child: ChildProcess): void {
	if (running.delete(child) && running.size === 0) process.off('exit', killRunning);
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		// The group is gone already.
	}
}

function runCommand(
	command: string,
	args: string[],
	options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number; echoStderr?: boolean } = {},
): Promise<CommandResult> {
	const timeoutMs = options.timeoutMs ?? COMMAND_TIMEOUT_MS;
	return new Promise((resolvePromise, reject) => {
		// Its own process group, so that a timeout also ends whatever the command started.
		const child = spawn(command, args, {
			cwd: options.cwd,
			env: options.env ?? process.env,
			detached: true,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		track(child);
		let stdout = '';
		let stderr = '';
		let timedOut = false;
		child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
			stdout += chunk;
		});
		child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
			stderr += chunk;
			if (options.echoStderr) process.stderr.write(chunk);
		});
		const timer = setTimeout(() => {
			timedOut = true;
			killGroup(child, 'SIGKILL');
		}, timeoutMs);
		child.on('error', (error) => {
			clearTimeout(timer);
			untrack(child);
			reject(error);
		});
		child.on('close', (exitCode, signal) => {
			clearTimeout(timer);
			untrack(child);
			killGroup(child, 'SIGKILL');
			if (timedOut) {
				reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms\n${tail(stdout + stderr)}`));
				return;
			}
			resolvePromise({ exitCode, signal, stdout, stderr });
		});
	});
}

function describeExit(result: CommandResult): string {
	return result.signal ? `signal ${result.signal}` : `exit code ${result.exitCode}`;
}

/** A TCP port on 127.0.0.1 that is free right now. */
export function freePort(): Promise<number> {
	return new Promise((resolvePromise, reject) => {
		const server = createServer();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as AddressInfo;
			server.close(() => resolvePromise(port));
		});
	});
}

// Variables bash itself sets, not part of what n8n_env exports.
const SHELL_VARIABLES = new Set(['PWD', 'OLDPWD', 'SHLVL', '_']);

/** The environment of an n8n command: this process's, plus what scripts/n8n-env.sh exports. */
function n8nEnvironment(userFolder: string, port: number, brokerPort: number): NodeJS.ProcessEnv {
	const script = join(PROJECT_ROOT, 'scripts', 'n8n-env.sh');
	const result = spawnSync(
		'bash',
		['-c', 'source "$1" && n8n_env "$2" "$3" "$4" && env -0', 'n8n-env', script, userFolder, String(port), String(brokerPort)],
		{ env: { PATH: process.env.PATH }, encoding: 'utf8' },
	);
	if (result.status !== 0) throw new Error(`scripts/n8n-env.sh failed: ${result.stderr}`);
	const exported: NodeJS.ProcessEnv = {};
	for (const entry of result.stdout.split('\0')) {
		const separator = entry.indexOf('=');
		if (separator <= 0) continue;
		const name = entry.slice(0, separator);
		if (!SHELL_VARIABLES.has(name)) exported[name] = entry.slice(separator + 1);
	}
	return { ...process.env, ...exported };
}

async function runN8n(
	n8nBin: string,
	userFolder: string,
	args: string[],
	{ allowFailure = false }: { allowFailure?: boolean } = {},
): Promise<CommandResult> {
	const env = n8nEnvironment(userFolder, await freePort(), await freePort());
	// The n8n executable is a Node script: run it with this Node (24, from scripts/toolchain.sh).
	const result = await runCommand(process.execPath, [n8nBin, ...args], { cwd: userFolder, env });
	if (!allowFailure && result.exitCode !== 0) {
		throw new Error(`n8n ${args.join(' ')} failed (${describeExit(result)}):\n${tail(result.stdout + result.stderr)}`);
	}
	return result;
}

function keepFolders(): boolean {
	return process.env.E2E_KEEP_FOLDERS === '1';
}

/**
 * Jest global set-up: installs n8n and prepares the user folder every prepareN8n() copies. Hands
 * both to the test files through the environment.
 */
export async function prepareRun(): Promise<void> {
	const packageFile = process.env.E2E_PACKAGE_TGZ;
	if (!packageFile || !existsSync(packageFile)) {
		throw new Error(
			'E2E_PACKAGE_TGZ must name the packed package (npm pack): run the suite with `npm run test:e2e`, which builds and packs it',
		);
	}
	const install = await runCommand('bash', [join(PROJECT_ROOT, 'scripts', 'install-n8n.sh')], {
		echoStderr: true,
		timeoutMs: INSTALL_TIMEOUT_MS,
	});
	if (install.exitCode !== 0) throw new Error(`scripts/install-n8n.sh failed (${describeExit(install)})`);
	const n8nBin = install.stdout.trim().split('\n').pop() ?? '';
	if (!existsSync(n8nBin)) throw new Error(`scripts/install-n8n.sh printed no n8n executable: "${n8nBin}"`);

	// Outside the project: from a folder inside it, the package would resolve n8n-workflow from the
	// project's node_modules instead of n8n's own, which no user's n8n does.
	const workDir = mkdtempSync(join(tmpdir(), 'pdi-e2e-'));
	const template = join(workDir, 'template');
	const nodesDir = join(template, '.n8n', 'nodes');
	mkdirSync(nodesDir, { recursive: true });
	writeFileSync(join(nodesDir, 'package.json'), `${JSON.stringify({ name: 'installed-nodes', private: true })}\n`);
	const npm = await runCommand(
		'npm',
		['install', '--legacy-peer-deps', '--ignore-scripts', '--no-audit', '--no-fund', resolve(packageFile)],
		{ cwd: nodesDir },
	);
	if (npm.exitCode !== 0) throw new Error(`npm install of the package failed:\n${tail(npm.stdout + npm.stderr)}`);
	// Any command migrates the new database; done once here instead of in every test file.
	await runN8n(n8nBin, template, ['list:workflow']);

	process.env.E2E_N8N_BIN = n8nBin;
	process.env.E2E_WORK_DIR = workDir;
	process.env.E2E_TEMPLATE_FOLDER = template;
}

/** Jest global tear-down. */
export function cleanRun(): void {
	const workDir = process.env.E2E_WORK_DIR;
	if (!workDir) return;
	if (keepFolders()) {
		process.stderr.write(`n8n user folders kept in ${workDir}\n`);
		return;
	}
	rmSync(workDir, { recursive: true, force: true });
}

function runSettings(): RunSettings {
	const { E2E_N8N_BIN: n8nBin, E2E_WORK_DIR: workDir, E2E_TEMPLATE_FOLDER: template } = process.env;
	if (!n8nBin || !workDir || !template) {
		throw new Error('The n8n end-to-end set-up did not run: use `npm run test:e2e` (test/e2e/jest.config.js)');
	}
	return { n8nBin, workDir, template };
}

/** A fresh n8n user folder with the package, an emulator and a credential for it. */
export async function prepareN8n(options: PrepareOptions = {}): Promise<N8nHarness> {
	const { n8nBin, workDir, template } = runSettings();
	const userFolder = mkdtempSync(join(workDir, 'n8n-'));
	cpSync(template, userFolder, { recursive: true, verbatimSymlinks: true });
	const emulator = await startEmulator({ processingMs: 0, ...options.emulator });
	const harness = new N8nHarness(n8nBin, userFolder, emulator);
	try {
		const [account] = emulator.options.accounts;
		await harness.importCredential(emulatorCredential(emulator.url, account, options.credential));
	} catch (error) {
		await harness.stop();
		throw error;
	}
	return harness;
}

export class N8nHarness {
	credential: CredentialImport | undefined;

	private server: N8nServer | undefined;

	private stopped = false;

	constructor(
		private readonly n8nBin: string,
		readonly userFolder: string,
		readonly emulator: Emulator,
	) {}

	/**
	 * Runs an n8n CLI command in this user folder; throws on a non-zero exit code unless
	 * `allowFailure`, which hands back a failed command's output as well.
	 */
	async n8n(args: string[], options: { allowFailure?: boolean } = {}): Promise<CommandResult> {
		return await runN8n(this.n8nBin, this.userFolder, args, options);
	}

	async importCredential(credential: CredentialImport): Promise<void> {
		const file = this.writeImportFile(`credential-${credential.id}.json`, [credential]);
		await this.n8n(['import:credentials', `--input=${file}`]);
		this.credential = credential;
	}

	async importWorkflow(workflow: WorkflowDefinition): Promise<string> {
		const id = workflow.id ?? randomUUID().replace(/-/g, '').slice(0, 16);
		const file = this.writeImportFile(`workflow-${id}.json`, { ...workflow, id });
		await this.n8n(['import:workflow', `--input=${file}`]);
		return id;
	}

	async executeWorkflow(
		id: string,
		{ expect = 'success' }: { expect?: 'success' | 'failure' } = {},
	): Promise<WorkflowRun> {
		const result = await this.n8n(['execute', `--id=${id}`, '--rawOutput'], { allowFailure: true });
		// n8n execute exits with 1 when the run failed and prints the run all the same.
		const wanted = expect === 'success' ? 0 : 1;
		if (result.exitCode !== wanted) {
			let why = '';
			try {
				const error = runError(parseExecuteOutput(result.stdout));
				if (error) why = ` (${error.node ? `${error.node}: ` : ''}${error.message})`;
			} catch {
				// No run in the output: its tail below says why.
			}
			throw new Error(
				`n8n execute --id=${id} ended with ${describeExit(result)}, expected exit code ${wanted}${why}\n${tail(result.stdout + result.stderr)}`,
			);
		}
		return parseExecuteOutput(result.stdout);
	}

	async publishWorkflow(id: string): Promise<void> {
		if (this.server) throw new Error('Publish workflows before startN8n(): a running n8n does not see it');
		await this.n8n(['publish:workflow', `--id=${id}`]);
	}

	async startN8n(): Promise<N8nServer> {
		if (this.server) throw new Error('n8n is running already');
		const port = await freePort();
		const env = n8nEnvironment(this.userFolder, port, await freePort());
		const logFile = join(this.userFolder, `n8n-start-${Date.now()}.log`);
		const log = openSync(logFile, 'a');
		const child = spawn(process.execPath, [this.n8nBin, 'start'], {
			cwd: this.userFolder,
			env,
			detached: true,
			stdio: ['ignore', log, log],
		});
		closeSync(log);
		track(child);
		const server = new N8nServer(`http://127.0.0.1:${port}`, child, logFile, this.loadFlatted());
		this.server = server;
		try {
			await server.waitUntilReady();
			await server.setUpOwner();
		} catch (error) {
			await server.stop();
			this.server = undefined;
			throw error;
		}
		return server;
	}

	async stop(): Promise<void> {
		if (this.stopped) return;
		this.stopped = true;
		try {
			await this.server?.stop();
			this.server = undefined;
		} finally {
			await this.emulator.close();
			if (!keepFolders()) rmSync(this.userFolder, { recursive: true, force: true });
		}
	}

	private writeImportFile(name: string, content: unknown): string {
		const dir = join(this.userFolder, 'import');
		mkdirSync(dir, { recursive: true });
		const file = join(dir, name);
		writeFileSync(file, JSON.stringify(content, null, '\t'));
		return file;
	}

	// The REST API hands execution data out in `flatted` form; n8n's own copy decodes it.
	private loadFlatted(): Flatted {
		const n8nPackage = join(dirname(dirname(this.n8nBin)), 'n8n', 'package.json');
		return createRequire(n8nPackage)('flatted') as Flatted;
	}
}

interface Flatted {
	parse(text: string): unknown;
}

const FINISHED_STATUSES: ReadonlySet<string> = new Set(['success', 'error', 'crashed', 'canceled']);

export class N8nServer {
	private cookie = '';

	private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

	private readonly exited: Promise<void>;

	constructor(
		readonly url: string,
		private readonly child: ChildProcess,
		readonly logFile: string,
		private readonly flatted: Flatted,
	) {
		this.exited = new Promise((resolvePromise) => {
			child.once('exit', (code, signal) => {
				this.exit = { code, signal };
				untrack(child);
				resolvePromise();
			});
		});
	}

	/** Waits for GET /healthz/readiness = 200 (/healthz answers before the REST API is up). */
	async waitUntilReady(timeoutMs = START_TIMEOUT_MS): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		while (Date.now() < deadline) {
			this.assertRunning();
			try {
				const { statusCode, body } = await httpRequest(`${this.url}/healthz/readiness`);
				await body.dump();
				if (statusCode === 200) return;
			} catch {
				// Not listening yet.
			}
			await sleep(250);
		}
		throw new Error(`n8n was not ready within ${timeoutMs} ms:\n${this.logTail()}`);
	}

	async setUpOwner(): Promise<void> {
		const { statusCode, headers, body } = await httpRequest(`${this.url}/rest/owner/setup`, {
			method: 'POST',
			headers: { 'content-type': 'application/json' },
			body: JSON.stringify(OWNER),
		});
		const text = await body.text();
		if (statusCode !== 200) throw new Error(`Owner set-up failed: ${statusCode} ${text}`);
		const setCookie = headers['set-cookie'];
		const cookies = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
		const auth = cookies.map((cookie) => cookie.split(';')[0]).find((cookie) => cookie.startsWith('n8n-auth='));
		if (!auth) throw new Error('Owner set-up answered without the n8n-auth cookie');
		this.cookie = auth;
	}

	/** Any route, logged in as the owner; the parsed JSON answer. Throws on a status >= 300. */
	async request<T = unknown>(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
		this.assertRunning();
		const response = await httpRequest(`${this.url}${path}`, {
			method,
			headers: { cookie: this.cookie, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const text = await response.body.text();
		if (response.statusCode >= 300) throw new Error(`${method} ${path}: ${response.statusCode} ${text.slice(0, 500)}`);
		return JSON.parse(text) as T;
	}

	/** The latest 100 executions, newest first (GET /rest/executions; 100 is its largest page). */
	async listExecutions(filter: { workflowId?: string; status?: ExecutionStatus } = {}): Promise<ExecutionSummary[]> {
		const query = new URLSearchParams({ filter: JSON.stringify(filter), limit: '100' });
		const answer = await this.request<{ data: { results: ExecutionSummary[] } }>('GET', `/rest/executions?${query}`);
		return answer.data.results;
	}

	/** One execution with its run data (GET /rest/executions/:id). */
	async getExecution(id: string): Promise<StoredExecution> {
		const answer = await this.request<{ data?: Omit<StoredExecution, 'data'> & { data: string } }>(
			'GET',
			`/rest/executions/${encodeURIComponent(id)}`,
		);
		if (!answer.data) throw new Error(`Execution ${id} not found`);
		return { ...answer.data, data: this.flatted.parse(answer.data.data) as IRunExecutionData };
	}

	/**
	 * Waits until the workflow has `count` finished executions (with `status`, if given) and returns
	 * them oldest first. A polling trigger polls once when n8n starts, then at its interval.
	 */
	async waitForExecutions({
		workflowId,
		count = 1,
		status,
		timeoutMs = 120_000,
	}: {
		workflowId: string;
		count?: number;
		status?: ExecutionStatus;
		timeoutMs?: number;
	}): Promise<ExecutionSummary[]> {
		const deadline = Date.now() + timeoutMs;
		let seen: ExecutionSummary[] = [];
		while (Date.now() < deadline) {
			seen = await this.listExecutions({ workflowId });
			const finished = seen.filter((execution) =>
				status ? execution.status === status : FINISHED_STATUSES.has(execution.status),
			);
			if (finished.length >= count) return finished.sort((a, b) => Number(a.id) - Number(b.id));
			await sleep(1000);
		}
		const statuses = seen.map((execution) => `${execution.id}:${execution.status}`).join(', ') || 'none';
		throw new Error(
			`Workflow ${workflowId} did not reach ${count} finished execution(s)${status ? ` with status ${status}` : ''} within ${timeoutMs} ms (seen: ${statuses})`,
		);
	}

	/** SIGTERM, as an operator stops n8n; SIGKILL for the whole group if it does not stop in time. */
	async stop(): Promise<void> {
		if (!this.exit) {
			this.child.kill('SIGTERM');
			const timer = setTimeout(() => killGroup(this.child, 'SIGKILL'), STOP_TIMEOUT_MS);
			await this.exited;
			clearTimeout(timer);
		}
		// The task runner n8n started, should it have outlived n8n.
		killGroup(this.child, 'SIGKILL');
	}

	private assertRunning(): void {
		if (this.exit) {
			const how = this.exit.signal ? `signal ${this.exit.signal}` : `exit code ${this.exit.code}`;
			throw new Error(`n8n stopped (${how}):\n${this.logTail()}`);
		}
	}

	private logTail(): string {
		return existsSync(this.logFile) ? tail(readFileSync(this.logFile, 'utf8')) : '(no log)';
	}
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolvePromise) => setTimeout(resolvePromise, ms));
}
