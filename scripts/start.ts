/**
 * `npm start` (through scripts/start.sh, which puts Node 24 and the project's dependencies in
 * place): the package in a real n8n next to the emulator of the service. Builds and packs the
 * package, installs n8n (cached), installs the package into a demo n8n user folder the way a user
 * installs a community node, starts the emulator, the fixture shop the nightly sync reads
 * (scripts/shop) and a Redis of its own, imports a credential for the emulator (its Rate Limit
 * Sharing in that Redis, where Only Changed Products remembers a catalogue read page by page) and
 * the workflows of examples/, starts n8n on 127.0.0.1, sets up a local owner and creates the data
 * tables the examples fill, then stays in the foreground: Ctrl-C stops n8n, the emulator, the shop
 * and Redis. Every example with a Manual Trigger then runs from the editor's "Execute workflow" as
 * it is.
 *
 * The demo folder is kept between runs, so that what is built in the editor survives a restart; the
 * package, the credential and the examples are installed again on every start (an example replaces
 * its earlier copy), a data table is kept with its rows. `npm start -- --reset` starts from an empty
 * folder. Redis starts empty, as the emulator does: what Only Changed Products remembers is what
 * that emulator confirmed.
 *
 * Environment: N8N_PORT (default 5678); N8N_DEMO_FOLDER (default: a folder in the per-user cache,
 * outside the project, see scripts/n8n/instance.ts); the emulator's EMULATOR_* variables
 * (scripts/emulator/README.md), e.g. EMULATOR_PORT (8470) or EMULATOR_PROCESSING_MS; the shop's
 * SHOP_* variables (scripts/shop/cli.ts), here SHOP_PRODUCTS 20 and SHOP_PAGE_SIZE 10 unless set,
 * and SHOP_PORT (8472, where the examples read it; on another port they are imported pointing
 * there).
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

import { EMULATOR_CREDENTIAL, emulatorCredential, sharingInRedis } from './n8n/credential';
import { installN8n, n8nVersion, N8nFolder, packPackage, PROJECT_ROOT } from './n8n/instance';
import { killGroup, sleep, tail, track, untrack } from './n8n/processes';
import type { DataTableColumnType, N8nServer, Owner, WorkflowDefinition } from './n8n/server';
import { dataTablesFilled } from './n8n/workflows';
import { startRedis, type RedisServer } from './redis';
import { EXAMPLE_SHOP_HOST, EXAMPLE_SHOP_PORT } from './shop';

/** Local demo values, printed for the user like the emulator's demo account. */
const DEMO_OWNER: Owner = {
	email: 'demo@example.com',
	password: 'Demo-password-1',
	firstName: 'Demo',
	lastName: 'Owner',
};

const HELPER_START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * The demo's shop unless SHOP_PRODUCTS or SHOP_PAGE_SIZE say otherwise: small, so that a night of
 * the nightly sync takes seconds, in two pages, so that it runs its page workflow more than once.
 */
const DEMO_SHOP_PRODUCTS = '20';
const DEMO_SHOP_PAGE_SIZE = '10';

interface EmulatorReady {
	productionUrl: string;
	testUrl: string;
	username: string;
	password: string;
}

interface ShopReady {
	url: string;
	productsUrl: string;
}

/** A process the demo runs beside n8n (the emulator, the shop), and what it said when ready. */
interface Helper<Ready> {
	name: string;
	child: ChildProcess;
	ready: Ready;
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

/**
 * Fails early and plainly, instead of after the build, when another program holds the port that
 * `variable` chooses.
 */
async function assertPortFree(port: number, variable: string): Promise<void> {
	await new Promise<void>((resolve, reject) => {
		const server = createServer();
		server.once('error', () =>
			reject(
				new Error(
					`Port ${port} on 127.0.0.1 is in use: stop what listens there or choose another with ${variable}.`,
				),
			),
		);
		server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
	});
}

function portOf(variable: string, fallback: number): number {
	const raw = process.env[variable];
	const port = raw === undefined || raw === '' ? fallback : Number(raw);
	if (!Number.isInteger(port) || port < 0 || port > 65_535)
		throw new UsageError(`${variable} must be a port number, got "${raw}"`);
	return port;
}

function cacheRoot(): string {
	return join(
		process.env.XDG_CACHE_HOME || join(homedir(), '.cache'),
		'n8n-nodes-product-data-integration',
	);
}

/**
 * A helper script (the emulator's or the shop's cli.ts) as its own process with `env` added, logging
 * to `logFile`; ready, with what it wrote to its ready file, when resolved.
 */
async function startHelper<Ready>(
	name: string,
	script: string,
	env: NodeJS.ProcessEnv & { readyVariable: string },
	work: string,
	logFile: string,
): Promise<Helper<Ready>> {
	const { readyVariable, ...extra } = env;
	const readyFile = join(work, `${name}.json`);
	const log = openSync(logFile, 'w');
	const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, script)], {
		cwd: PROJECT_ROOT,
		env: { ...process.env, ...extra, [readyVariable]: readyFile },
		detached: true,
		stdio: ['ignore', log, log],
	});
	closeSync(log);
	track(child);
	const deadline = Date.now() + HELPER_START_TIMEOUT_MS;
	while (!existsSync(readyFile)) {
		if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
			killGroup(child, 'SIGKILL');
			untrack(child);
			throw new Error(`The ${name} did not start.\n${tail(readFileSync(logFile, 'utf8'))}`);
		}
		await sleep(100);
	}
	return { name, child, ready: JSON.parse(readFileSync(readyFile, 'utf8')) as Ready };
}

/** SIGTERM and up to 30 s to exit, then SIGKILL for its whole process group. */
async function stopHelper({ name, child }: Helper<unknown>): Promise<void> {
	if (child.exitCode === null && child.signalCode === null) {
		process.stderr.write(`Stopping the ${name}\n`);
		const exited = new Promise((resolve) => child.once('exit', resolve));
		child.kill('SIGTERM');
		const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS);
		await exited;
		clearTimeout(timer);
	}
	killGroup(child, 'SIGKILL');
	untrack(child);
}

async function stopRedis(redis: RedisServer | undefined): Promise<void> {
	if (!redis) return;
	process.stderr.write('Stopping Redis\n');
	await redis.stop();
}

/**
 * The workflows of examples/, those that read the fixture shop pointed at `shopUrl` wherever they
 * name its host (the product API, the photo host Upload Photo allows). One without an id gets one
 * derived from its file name, so that every start replaces it instead of adding a copy; the others
 * keep theirs, so an Execute Workflow node names the example it runs by the id it has in n8n.
 */
function readExamples(shopUrl: string): Array<WorkflowDefinition & { id: string }> {
	const dir = join(PROJECT_ROOT, 'examples');
	const shopHost = new URL(shopUrl).host;
	return readdirSync(dir)
		.filter((file) => file.endsWith('.json'))
		.sort()
		.map((file) => {
			const text = readFileSync(join(dir, file), 'utf8').replaceAll(EXAMPLE_SHOP_HOST, shopHost);
			const workflow = JSON.parse(text) as WorkflowDefinition;
			return {
				...workflow,
				id: workflow.id ?? createHash('sha1').update(basename(file)).digest('hex').slice(0, 16),
			};
		});
}

/**
 * The data tables the examples add rows to, each with every column an example's Data Table node
 * names: created in n8n as a user would before running them, or kept with their rows. Their names.
 */
async function ensureDataTables(
	server: N8nServer,
	examples: WorkflowDefinition[],
): Promise<string[]> {
	const tables = new Map<string, Map<string, DataTableColumnType>>();
	for (const { name, columns } of examples.flatMap(dataTablesFilled)) {
		const known = tables.get(name) ?? new Map<string, DataTableColumnType>();
		for (const column of columns) if (!known.has(column.name)) known.set(column.name, column.type);
		tables.set(name, known);
	}
	for (const [name, columns] of tables) {
		await server.ensureDataTable(
			name,
			[...columns].map(([column, type]) => ({ name: column, type })),
		);
	}
	return [...tables.keys()].sort();
}

async function main(): Promise<void> {
	const { reset } = parseArguments(process.argv.slice(2));
	const port = portOf('N8N_PORT', 5678);
	const shopPort = portOf('SHOP_PORT', EXAMPLE_SHOP_PORT);
	const demo = process.env.N8N_DEMO_FOLDER || join(cacheRoot(), 'demo');
	await assertPortFree(port, 'N8N_PORT');
	if (shopPort !== 0) await assertPortFree(shopPort, 'SHOP_PORT');

	const work = mkdtempSync(join(tmpdir(), 'pdi-start-'));
	const helpers: Array<Helper<unknown>> = [];
	let server: N8nServer | undefined;
	let redis: RedisServer | undefined;
	let stopping: Promise<void> | undefined;
	const stop = (): Promise<void> => {
		stopping ??= (async () => {
			if (server) {
				process.stderr.write('Stopping n8n\n');
				await server.stop();
			}
			await Promise.all([...helpers.map(stopHelper), stopRedis(redis)]);
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

		say('Start the emulator, the fixture shop and Redis');
		const emulator = await startHelper<EmulatorReady>(
			'emulator',
			'scripts/emulator/cli.ts',
			{ readyVariable: 'EMULATOR_READY_FILE' },
			work,
			join(demo, 'emulator.log'),
		);
		helpers.push(emulator);
		const shop = await startHelper<ShopReady>(
			'shop',
			'scripts/shop/cli.ts',
			{
				SHOP_PORT: String(shopPort),
				SHOP_PRODUCTS: process.env.SHOP_PRODUCTS || DEMO_SHOP_PRODUCTS,
				SHOP_PAGE_SIZE: process.env.SHOP_PAGE_SIZE || DEMO_SHOP_PAGE_SIZE,
				readyVariable: 'SHOP_READY_FILE',
			},
			work,
			join(demo, 'shop.log'),
		);
		helpers.push(shop);
		redis = await startRedis();
		const { ready } = emulator;

		say('Import the emulator credential');
		await folder.importCredentials([
			emulatorCredential(ready.productionUrl, ready, sharingInRedis(redis)),
		]);
		const examples = readExamples(shop.ready.url);
		if (examples.length > 0) {
			say(`Import ${examples.length} example workflow(s) from examples/`);
			await folder.importWorkflows(examples);
		}

		say(`Start n8n ${n8nVersion(n8nBin)} on http://127.0.0.1:${port}`);
		server = await folder.start({ port, logFile: join(demo, 'n8n.log') });
		const owner = await server.ensureOwner(DEMO_OWNER);
		const tables = await ensureDataTables(server, examples);
		// n8n imports every workflow inactive: those marked active are published.
		const published = examples.filter((example) => example.active === true);
		for (const example of published) await server.activateWorkflow(example.id);

		const login = `${DEMO_OWNER.email} / ${DEMO_OWNER.password}`;
		process.stdout.write(
			[
				'',
				`n8n ${n8nVersion(n8nBin)} with ${name} ${version} is ready.`,
				`  editor:      ${server.url}`,
				`  login:       ${owner === 'created' ? login : `${login} (the owner of an earlier start; --reset makes it again)`}`,
				`  emulator:    ${ready.productionUrl} (production), ${ready.testUrl} (development/test)`,
				`               user ${ready.username} / ${ready.password}, in n8n as the credential "${EMULATOR_CREDENTIAL.name}"`,
				`  shop:        ${shop.ready.productsUrl} (the nightly sync's fixture shop)`,
				`  redis:       127.0.0.1:${redis.port} (the credential's Rate Limit Sharing; Only Changed Products remembers pages there)`,
				`  workflows:   ${examples.length} example(s) from examples/, ${published.length} of them published`,
				`  data tables: ${tables.map((table) => `"${table}"`).join(', ') || 'none'}`,
				`  demo data:   ${demo} (n8n.log, emulator.log, shop.log)`,
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
