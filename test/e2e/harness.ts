/**
 * End-to-end harness: the packed package installed into a real n8n (the version pinned in
 * scripts/n8n-host), one `n8n start` for the whole run, workflows created and run through its REST
 * API against an emulator that lives in the test file's own process. The driver of n8n is scripts/n8n/
 * (shared with `npm start`); this file adds the emulator and jest's set-up.
 *
 * Running: `npm run test:e2e` (scripts/e2e.sh) runs every `*.test.ts` under test/e2e with
 * test/e2e/jest.config.js, in two jest workers; arguments go on to jest (`npm run test:e2e --
 * test/e2e/harness.test.ts`, or `-t 'name of a test'`). The global set-up builds the package from
 * clean and packs it (or takes the tarball E2E_PACKAGE_TGZ names; E2E_EDITION=verified: the verified
 * edition, or E2E_VERIFIED_TGZ; see scripts/n8n/edition.ts), installs n8n (cached by
 * scripts/install-n8n.sh), prepares an n8n user folder with the package installed (by the README's
 * command: installCommand in scripts/n8n/instance.ts) and starts one n8n per worker on a copy of
 * it; the files of a worker run one after the other in its n8n.
 * `E2E_KEEP_FOLDERS=1` keeps the user folders (SQLite database, n8n's log) for a look; a queue-mode
 * cluster's PostgreSQL goes with the cluster.
 * `N8N_VERSION_UNDER_TEST=<version>` runs the files in another n8n of the version matrix, one with a
 * host folder scripts/n8n-host-<version> (`npm run test:versions`, scripts/test-versions.sh, runs them all).
 *
 *   import { chainWorkflow, actionNode, nodeItems, prepareN8n, type N8nHarness } from './harness';
 *
 *   let n8n: N8nHarness;
 *   beforeAll(async () => { n8n = await prepareN8n({ emulator: { processingMs: 100 } }); });
 *   afterAll(async () => { await n8n?.stop(); });
 *
 *   test('uploads a document', async () => {
 *     const run = await n8n.run(chainWorkflow('Upload', [{ json: { xml: '<Products/>' } }], [
 *       actionNode('Upload', { resource: 'document', operation: 'upload', source: 'text', xml: '={{ $json.xml }}' }),
 *     ]));                                               // well under a second once n8n is up
 *     expect(nodeItems(run, 'Upload')[0]).toMatchObject({ ... });
 *     expect(n8n.emulator.stats().uploads).toBe(1);
 *   });
 *
 * API
 * - prepareN8n({ emulator?, credential?, env?, alsoInstall?, database? }) -> N8nHarness: an emulator
 *   started in this process (scripts/emulator; `processingMs` 0 and a bucket leaking every 100 ms
 *   unless given), the worker's n8n (with `env`: an n8n of its own with that environment added, on a
 *   fresh copy of the prepared user folder, about 10 s to start; with `alsoInstall`: the same, with
 *   the other edition of the package installed too; with `database`: the same, on that database
 *   instead of the folder's SQLite file), the owner logged in, and the credential
 *   EMULATOR_CREDENTIAL (customer 1001 of the default account, the emulator's bucket terms as its
 *   Custom Rate Limit; `credential` overrides its fields) pointing at the emulator.
 * - harness.run(workflow, { expect: 'success' | 'failure' }) -> StoredExecution: creates the workflow
 *   and runs it from its Manual Trigger, as the editor's "Execute workflow" does; the finished
 *   execution with its run data. Throws unless its status is 'success' (default) or 'error'.
 * - harness.importWorkflow(workflow) -> id (keeps the workflow's id, gives one if it has none);
 *   harness.executeWorkflow(id, { expect }) runs it (e.g. twice); harness.server.startRun(id) starts
 *   a run without waiting, server.waitForExecution(executionId) waits for it.
 * - harness.server.activateWorkflow(id) / deactivateWorkflow(id): publish a trigger workflow; a
 *   polling trigger polls at once on activation (then every minute: n8n allows no shorter interval),
 *   so deactivating and activating again is a poll on demand. server.waitForExecutions({ workflowId,
 *   count?, status? }) waits for the executions a trigger started.
 * - harness.createCredential(overrides) -> { id, name }: another credential for the emulator.
 * - harness.server: any REST route (server.request(method, path, body)), executions
 *   (listExecutions, getExecution), n8n's output so far (server.log()).
 * - harness.stop(): stops the emulator (and an n8n of its own, removing its user folder).
 * The worker's n8n is shared: workflows, credentials and executions of earlier files stay in it, so
 * a test looks at its own workflows' executions, and creates an example workflow of examples/ as a
 * copy (`{ ...example, id: undefined }`) unless it is examples.test.ts.
 * - startQueueCluster({ workers, concurrency, publish, ... }) -> QueueCluster: n8n in queue mode, a
 *   main and workers on one Redis and one PostgreSQL of their own (cluster.postgres.query(sql) reads
 *   it), the workflows `publish` imported served by the main;
 *   cluster.callWebhook(path, workflowId) runs one and names its worker; cluster.stop().
 * - until(what, condition, timeoutMs): waits for what n8n does in the background (a trigger's
 *   polls, a run started with startRun); sleep(ms).
 * - nodeItems(run, nodeName, { output?, runIndex? }) and runError(run) read a StoredExecution;
 *   chainWorkflow/actionNode/downloadNode build workflows (scripts/n8n/workflows.ts); nodeType(name)
 *   is the type of one of the package's nodes.
 * Two workers, not more: an n8n process takes about 400 MB and seconds of CPU to start, and several
 * tests mostly wait (a minute poll, queue mode's processes, `npm start`) while the other worker runs.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';

import {
	DEFAULT_ACCOUNT,
	startEmulator,
	type Emulator,
	type EmulatorOptions,
} from '../../scripts/emulator';
import {
	CREDENTIAL_TYPE,
	EMULATOR_CREDENTIAL,
	emulatorCredential,
	sharingInRedis,
	type CredentialData,
	type CredentialImport,
} from '../../scripts/n8n/credential';
import { editionTarball, type Edition } from '../../scripts/n8n/edition';
import { installN8n, N8nFolder, postgresDatabase, PROJECT_ROOT } from '../../scripts/n8n/instance';
import { sleep } from '../../scripts/n8n/processes';
import { nodeType } from '../../scripts/n8n/workflows';
import { startPostgres, type PostgresServer } from '../../scripts/postgres';
import { startRedis } from '../../scripts/redis';
import { EXAMPLE_SHOP_HOST, type Shop } from '../../scripts/shop';
import type {
	N8nServer,
	Owner,
	StoredExecution,
	WorkflowDefinition,
} from '../../scripts/n8n/server';

export { CREDENTIAL_TYPE, EMULATOR_CREDENTIAL, emulatorCredential, PROJECT_ROOT, sharingInRedis };
export type { CredentialData, CredentialImport, WorkflowDefinition };
export { nodeItems, runError } from '../../scripts/n8n/run-data';
export type { ExecutionSummary, N8nServer, StoredExecution } from '../../scripts/n8n/server';
export { freePort, sleep } from '../../scripts/n8n/processes';
export {
	actionNode,
	chainWorkflow,
	dataTablesFilled,
	downloadNode,
	ITEMS_NAME,
	nodeType,
	type ChainNode,
	type InputItem,
} from '../../scripts/n8n/workflows';

/** The owner every prepareN8n() sets up: local test values, like the encryption key in scripts/n8n/instance.ts. */
export const OWNER: Owner = {
	email: 'owner@example.com',
	firstName: 'Test',
	lastName: 'Owner',
	password: 'Local-test-password-1',
};

function keepFolders(): boolean {
	return process.env.E2E_KEEP_FOLDERS === '1';
}

/** An n8n the test files of one jest worker share, started by the global set-up. */
interface SharedN8n {
	folder: string;
	url: string;
	logFile: string;
}

/** What the global set-up hands to the test files (through the environment jest's workers inherit). */
interface RunSettings {
	n8nBin: string;
	workDir: string;
	template: string;
	/** One n8n per jest worker: the files of a worker run one after the other in it. */
	shared: SharedN8n[];
}

const SETTINGS_VARIABLE = 'E2E_N8N_RUN';

// Jest hands the globals of the global set-up to the global tear-down, nothing else.
const sharedServers = globalThis as { e2eSharedN8n?: N8nServer[] };

/** The jest configuration the global set-up is given (the part read here). */
export interface JestRunConfig {
	maxWorkers: number;
	rootDir: string;
	testPathPattern: string;
}

/**
 * How many workers jest will run the files in: the files under test/e2e that the command line's
 * path pattern selects (jest matches it the same way, case-insensitive), at most maxWorkers; jest
 * runs a single file in its own process.
 */
export function workersOfRun(config: JestRunConfig): number {
	const folder = join(config.rootDir, 'test', 'e2e');
	const pattern = new RegExp(config.testPathPattern, 'i');
	const files = readdirSync(folder, { recursive: true, encoding: 'utf8' })
		.filter((name) => name.endsWith('.test.ts'))
		.filter((name) => pattern.test(join(folder, name)));
	return Math.max(1, Math.min(config.maxWorkers, files.length));
}

/**
 * Jest global set-up: installs n8n, prepares the user folder every n8n of the run starts from, and
 * starts one n8n per jest worker, for the test files that worker runs one after the other.
 */
export async function prepareRun(config: JestRunConfig): Promise<void> {
	const workDir = mkdtempSync(join(tmpdir(), 'pdi-e2e-'));
	const tarball = editionTarball(join(workDir, 'pack'));
	const n8nBin = await installN8n(process.env.N8N_VERSION_UNDER_TEST || undefined);
	const template = await N8nFolder.create(n8nBin, join(workDir, 'template'), tarball);
	// Pointing nowhere until prepareN8n() points it at its emulator; imported here so that it keeps
	// the fixed id the examples name. The import also migrates the new database, once for the run.
	await template.importCredentials([emulatorCredential('http://127.0.0.1:9', DEFAULT_ACCOUNT)]);
	const folders = Array.from({ length: workersOfRun(config) }, (_, index) =>
		template.copyTo(join(workDir, `shared-${index + 1}`)),
	);
	const started = await Promise.allSettled(folders.map(async (folder) => await folder.start()));
	const servers = started.flatMap((outcome) =>
		outcome.status === 'fulfilled' ? [outcome.value] : [],
	);
	sharedServers.e2eSharedN8n = servers;
	const failure = started.find((outcome) => outcome.status === 'rejected');
	if (failure) throw failure.reason;
	await Promise.all(servers.map(async (server) => await server.ensureOwner(OWNER)));
	const settings: RunSettings = {
		n8nBin,
		workDir,
		template: template.path,
		shared: folders.map((folder, index) => ({
			folder: folder.path,
			url: servers[index].url,
			logFile: servers[index].logFile,
		})),
	};
	process.env[SETTINGS_VARIABLE] = JSON.stringify(settings);
}

/** Jest global tear-down. */
export async function cleanRun(): Promise<void> {
	await Promise.all((sharedServers.e2eSharedN8n ?? []).map(async (server) => await server.stop()));
	const settings = process.env[SETTINGS_VARIABLE];
	if (!settings) return;
	const { workDir } = JSON.parse(settings) as RunSettings;
	if (keepFolders()) {
		process.stderr.write(`n8n user folders kept in ${workDir}\n`);
		return;
	}
	rmSync(workDir, { recursive: true, force: true });
}

function runSettings(): RunSettings {
	const settings = process.env[SETTINGS_VARIABLE];
	if (!settings)
		throw new Error(
			'The n8n end-to-end set-up did not run: use `npm run test:e2e` (test/e2e/jest.config.js)',
		);
	return JSON.parse(settings) as RunSettings;
}

/** The n8n of this jest worker (JEST_WORKER_ID counts from 1, also when jest runs a file in its own process). */
function sharedN8nOfWorker({ shared }: RunSettings): SharedN8n {
	const worker = Number(process.env.JEST_WORKER_ID ?? '1');
	const n8n = shared[worker - 1];
	if (!n8n)
		throw new Error(`No n8n was started for jest worker ${worker} (${shared.length} started)`);
	return n8n;
}

export interface PrepareOptions {
	emulator?: EmulatorOptions;
	credential?: Partial<CredentialData>;
	/** More environment for n8n. */
	env?: NodeJS.ProcessEnv;
	/**
	 * n8n's settings for a database of its own instead of the folder's SQLite file
	 * (postgresDatabase()); the emulator credential is imported into it before n8n starts.
	 */
	database?: NodeJS.ProcessEnv;
	/** The other edition installed next to the edition under test, as a user may have both. */
	alsoInstall?: Edition;
}

/**
 * The emulator's bucket drains a request every 100 ms instead of every 5 s, and the credential
 * states these terms (Custom Rate Limit): the tests of a file share one n8n and so the throttle of
 * one account, and must not wait for each other's requests to leak out of it.
 */
const FAST_LEAK_MS = 100;

type Example = WorkflowDefinition & { id: string };

/** An example of examples/ as a user imports it (with its id), pointed at `shop` wherever it names the demo's shop. */
export function readShopExample(file: string, shop: Shop): Example {
	const text = readFileSync(join(PROJECT_ROOT, 'examples', file), 'utf8');
	return JSON.parse(text.replaceAll(EXAMPLE_SHOP_HOST, new URL(shop.url).host)) as Example;
}

/** Waits, checking every half second, until `condition` holds; fails naming `what` after `timeoutMs`. */
export async function until(
	what: string,
	condition: () => boolean | Promise<boolean>,
	timeoutMs: number,
): Promise<void> {
	const deadline = Date.now() + timeoutMs;
	while (!(await condition())) {
		if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
		await sleep(500);
	}
}

/**
 * The n8n of this worker with an emulator of this test file and the emulator credential pointing at
 * it; with `env` or `alsoInstall`, an n8n of its own on a fresh user folder.
 */
export async function prepareN8n(options: PrepareOptions = {}): Promise<N8nHarness> {
	const settings = runSettings();
	const { n8nBin, workDir, template } = settings;
	const emulator = await startEmulator({
		processingMs: 0,
		leakIntervalMs: FAST_LEAK_MS,
		...options.emulator,
	});
	const [account] = emulator.options.accounts;
	const credential = emulatorCredential(emulator.url, account, {
		customRateLimit: true,
		bucketCapacity: emulator.options.bucketCapacity,
		leakIntervalSeconds: emulator.options.leakIntervalMs / 1000,
		...options.credential,
	});
	const ownN8n = [options.env, options.alsoInstall, options.database].some(
		(option) => option !== undefined,
	);
	let server: N8nServer | undefined;
	try {
		let folder: N8nFolder;
		if (ownN8n) {
			folder = new N8nFolder(n8nBin, template).copyTo(mkdtempSync(join(workDir, 'n8n-')));
			if (options.alsoInstall) {
				folder = await N8nFolder.create(
					n8nBin,
					folder.path,
					editionTarball(join(workDir, `pack-${options.alsoInstall}`), options.alsoInstall),
				);
			}
			if (options.database) {
				folder = folder.withDatabase(options.database);
				await folder.importCredentials([credential]);
			}
			server = await folder.start({ env: options.env });
		} else {
			const shared = sharedN8nOfWorker(settings);
			folder = new N8nFolder(n8nBin, shared.folder);
			server = folder.attach(shared.url, shared.logFile);
		}
		await server.ensureOwner(OWNER);
		await server.updateCredential(credential.id, credential);
		return new N8nHarness(folder, server, emulator, credential, ownN8n);
	} catch (error) {
		await server?.stop();
		await emulator.close();
		throw error;
	}
}

export class N8nHarness {
	private stopped = false;

	constructor(
		readonly folder: N8nFolder,
		readonly server: N8nServer,
		readonly emulator: Emulator,
		/** The emulator credential as n8n has it (fixed id EMULATOR_CREDENTIAL.id). */
		readonly credential: CredentialImport,
		/** Whether n8n and its folder are this harness's own, not the worker's shared ones (stop() leaves those). */
		private readonly ownN8n: boolean,
	) {}

	/** Creates the workflow and runs it from its Manual Trigger; the finished execution. */
	async run(
		workflow: WorkflowDefinition,
		options: { expect?: 'success' | 'failure' } = {},
	): Promise<StoredExecution> {
		return await this.executeWorkflow(await this.importWorkflow(workflow), options);
	}

	/** Creates the workflow, keeping its id if it has one; its id. */
	async importWorkflow(workflow: WorkflowDefinition): Promise<string> {
		return (await this.server.createWorkflow(workflow)).id;
	}

	async executeWorkflow(
		id: string,
		options: { expect?: 'success' | 'failure' } = {},
	): Promise<StoredExecution> {
		return await this.server.runWorkflow(id, options);
	}

	/** Another credential for the emulator (the emulator credential's data with `overrides`). */
	async createCredential(
		name: string,
		overrides: Partial<CredentialData>,
	): Promise<{ id: string; name: string }> {
		const [account] = this.emulator.options.accounts;
		const { type, data } = emulatorCredential(this.emulator.url, account, overrides);
		return { id: await this.server.createCredential({ name, type, data }), name };
	}

	async stop(): Promise<void> {
		if (this.stopped) return;
		this.stopped = true;
		try {
			// The next file points the emulator credential at its own emulator: a trigger left active
			// here would poll that one and eat the fault rules its tests set.
			if (!this.ownN8n) await this.server.deactivateAllWorkflows();
			await this.server.stop();
		} finally {
			await this.emulator.close();
			if (this.ownN8n && !keepFolders()) rmSync(this.folder.path, { recursive: true, force: true });
		}
	}
}

export interface QueueClusterOptions extends Omit<PrepareOptions, 'env' | 'database'> {
	workers: number;
	/** Executions each worker runs at once (`n8n worker --concurrency`). */
	concurrency: number;
	/**
	 * Workers started with the queue's Redis settings but without EXECUTIONS_MODE, as n8n allows
	 * (the `worker` command alone puts a process in queue mode).
	 */
	workersWithoutExecutionsMode?: boolean;
	/** Imports and activates the cluster's workflows, before the main starts to serve them. */
	publish(n8n: N8nHarness): Promise<void>;
}

export interface QueueCluster {
	/** The emulator, credential and user folder the cluster's processes share. */
	n8n: N8nHarness;
	main: N8nServer;
	workers: N8nServer[];
	/** The port of the queue's Redis on 127.0.0.1. */
	redisPort: number;
	/** The database of every process of the cluster. */
	postgres: PostgresServer;
	/**
	 * POSTs `body` (default `{}`) to a workflow's webhook on the main; its answer and the index in
	 * `workers` of the worker that ran the workflow's latest execution: this call's when calls come
	 * one at a time (side by side, count each worker's executions instead).
	 */
	callWebhook(
		path: string,
		workflowId: string,
		body?: Record<string, unknown>,
	): Promise<{ output: Array<Record<string, unknown>>; worker: number }>;
	/** Stops every process of the cluster, its Redis, its PostgreSQL and the emulator. */
	stop(): Promise<void>;
}

/**
 * n8n in queue mode: one main and `workers` workers on one Redis and one PostgreSQL database, both
 * servers of the cluster's own (n8n's documentation asks for PostgreSQL in queue mode, and users
 * run it so); the workflows and credentials `publish` makes go into that database too. A main in
 * queue mode answered 404 to webhooks activated while it ran (n8n 2.41.1), so the workflows are
 * published first and the main started afterwards, as after a deployment. On a failure midway,
 * whatever had started is stopped before the error is thrown.
 */
export async function startQueueCluster(options: QueueClusterOptions): Promise<QueueCluster> {
	const {
		workers: workerCount,
		concurrency,
		workersWithoutExecutionsMode,
		publish,
		...prepare
	} = options;
	const redis = await startRedis();
	let postgres: PostgresServer | undefined;
	const queueRedis = {
		QUEUE_BULL_REDIS_HOST: '127.0.0.1',
		QUEUE_BULL_REDIS_PORT: String(redis.port),
	};
	const queue = { EXECUTIONS_MODE: 'queue', ...queueRedis };
	const processes: N8nServer[] = [];
	let n8n: N8nHarness | undefined;
	const stop = async () => {
		try {
			await Promise.all(processes.map(async (process) => await process.stop()));
			await n8n?.stop();
		} finally {
			// The servers go even when a process would not stop.
			try {
				await postgres?.stop();
			} finally {
				await redis.stop();
			}
		}
	};
	try {
		postgres = await startPostgres();
		n8n = await prepareN8n({ ...prepare, env: queue, database: postgresDatabase(postgres) });
		await publish(n8n);
		await n8n.server.stop();
		const main = await n8n.folder.start({ env: queue });
		processes.push(main);
		await main.ensureOwner(OWNER);
		const workers: N8nServer[] = [];
		for (let index = 0; index < workerCount; index++) {
			const worker = await n8n.folder.start({
				command: 'worker',
				args: [`--concurrency=${concurrency}`],
				env: workersWithoutExecutionsMode ? queueRedis : queue,
			});
			processes.push(worker);
			workers.push(worker);
		}
		const callWebhook = async (path: string, workflowId: string, body = {}) => {
			const response = await request(`${main.url}/webhook/${path}`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify(body),
			});
			const text = await response.body.text();
			if (response.statusCode !== 200)
				throw new Error(`The webhook answered ${response.statusCode}: ${text.slice(0, 500)}`);
			const runs = (await main.listExecutions({ workflowId })).filter(
				(execution) => execution.mode === 'webhook',
			);
			const latest = Math.max(...runs.map((execution) => Number(execution.id)));
			const worker = workers.findIndex((process) =>
				process.log().includes(`Worker started execution ${latest} `),
			);
			return { output: JSON.parse(text) as Array<Record<string, unknown>>, worker };
		};
		return { n8n, main, workers, redisPort: redis.port, postgres, callWebhook, stop };
	} catch (error) {
		await stop();
		throw error;
	}
}

/**
 * The Webhook node that starts a test workflow: a POST to `path` (node ids are named after it),
 * answered at once (`onReceived`) or with every item of the last node (`lastNode`).
 */
export function webhookNode(
	path: string,
	responseMode: 'onReceived' | 'lastNode',
): WorkflowDefinition['nodes'][number] {
	return {
		id: `${path}-webhook`,
		name: 'Webhook',
		type: 'n8n-nodes-base.webhook',
		typeVersion: 2,
		position: [0, 0],
		webhookId: `${path}-webhook`,
		parameters: {
			httpMethod: 'POST',
			path,
			responseMode,
			...(responseMode === 'lastNode' ? { responseData: 'allEntries' } : {}),
			options: {},
		},
	};
}

/**
 * A catalogue sync started by a webhook: the shop's products (HTTP Request) -> Upload with Only
 * Changed Products (`upload`: more of its parameters). Node ids are named after `path`. The webhook
 * answers at once (`onReceived`) or with the Upload's items (`lastNode`).
 */
export function changedProductsSyncWorkflow(options: {
	name: string;
	path: string;
	shopUrl: string;
	credential: { id: string; name: string };
	responseMode: 'onReceived' | 'lastNode';
	/** More parameters of the Upload node. */
	upload?: Record<string, unknown>;
}): WorkflowDefinition {
	const { name, path, shopUrl, credential, responseMode, upload } = options;
	return {
		name,
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(path, responseMode),
			{
				id: `${path}-shop`,
				name: 'Shop',
				type: 'n8n-nodes-base.httpRequest',
				typeVersion: 4.2,
				position: [220, 0],
				parameters: { url: shopUrl },
			},
			{
				id: `${path}-upload`,
				name: 'Upload',
				type: nodeType('productDataIntegration'),
				typeVersion: 1,
				position: [440, 0],
				parameters: {
					resource: 'document',
					operation: 'upload',
					source: 'items',
					rootElement: 'Products',
					itemElement: 'Product',
					onlyChangedProducts: true,
					productField: 'sku',
					...upload,
				},
				credentials: { [CREDENTIAL_TYPE]: credential },
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Shop', type: 'main', index: 0 }]] },
			Shop: { main: [[{ node: 'Upload', type: 'main', index: 0 }]] },
		},
	};
}

/**
 * Send Collected Products started by a webhook, which answers with its items: what the pages of a
 * night collected under `memoryName` goes now.
 */
export function sendCollectedWorkflow(options: {
	name: string;
	path: string;
	memoryName: string;
	productsPerDocument: number;
	credential: { id: string; name: string };
}): WorkflowDefinition {
	const { name, path, memoryName, productsPerDocument, credential } = options;
	return {
		name,
		settings: { executionOrder: 'v1' },
		nodes: [
			webhookNode(path, 'lastNode'),
			{
				id: `${path}-send`,
				name: 'Send Collected Products',
				type: nodeType('productDataIntegration'),
				typeVersion: 1,
				position: [220, 0],
				parameters: {
					resource: 'document',
					operation: 'sendCollected',
					memoryName,
					productsPerDocument,
					options: {},
				},
				credentials: { [CREDENTIAL_TYPE]: credential },
			},
		],
		connections: {
			Webhook: { main: [[{ node: 'Send Collected Products', type: 'main', index: 0 }]] },
		},
	};
}
