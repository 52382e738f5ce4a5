/**
 * `npm start`, the demo, as a user runs it: from the command to a logged-in editor with the
 * emulator credential (its Rate Limit Sharing in the demo's Redis), the examples and the data tables they fill, every example with a Manual
 * Trigger run as the editor's "Execute workflow" button runs it, then Ctrl-C; and a second start on
 * the same demo folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';

import {
	EMULATOR_CREDENTIAL,
	freePort,
	nodeItems,
	PROJECT_ROOT,
	type N8nServer,
	type StoredExecution,
	type WorkflowDefinition,
} from './harness';
import type { EmulatorStats } from '../../scripts/emulator';
import { installN8n, N8nFolder } from '../../scripts/n8n/instance';
import { accepts, tail } from '../../scripts/n8n/processes';

const READY_LINE = 'Press Ctrl-C to stop.';

interface Demo {
	child: ChildProcess;
	output: () => string;
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startDemo(env: NodeJS.ProcessEnv): Demo {
	// Its own process group, like a terminal's foreground job: Ctrl-C goes to the whole group.
	const child = spawn('npm', ['start'], {
		cwd: PROJECT_ROOT,
		env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
	child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
		child.once('exit', (code, signal) => resolve({ code, signal })),
	);
	return { child, output: () => output, exited };
}

function signal(demo: Demo, name: NodeJS.Signals, { group }: { group: boolean }): void {
	const { pid } = demo.child;
	if (pid === undefined) throw new Error('npm start has no process id');
	process.kill(group ? -pid : pid, name);
}

async function untilReady(demo: Demo): Promise<void> {
	let exited = false;
	void demo.exited.then(() => (exited = true));
	while (!demo.output().includes(READY_LINE)) {
		if (exited) throw new Error(`npm start ended before n8n was ready:\n${tail(demo.output())}`);
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
}

function bannerValue(output: string, label: string): string {
	const match = new RegExp(`^\\s+${label}:\\s+(.+)$`, 'm').exec(output);
	if (!match) throw new Error(`No "${label}" in the banner:\n${tail(output)}`);
	return match[1];
}

function emulatorUrl(demo: Demo): string {
	const match = /(http:\/\/127\.0\.0\.1:\d+) \(production\)/.exec(
		bannerValue(demo.output(), 'emulator'),
	);
	if (!match) throw new Error(`No emulator URL in the banner:\n${tail(demo.output())}`);
	return match[1];
}

/** The port of the demo's Redis on 127.0.0.1 (the banner names it). */
function redisPort(demo: Demo): number {
	const match = /^127\.0\.0\.1:(\d+) /.exec(bannerValue(demo.output(), 'redis'));
	if (!match) throw new Error(`No Redis port in the banner:\n${tail(demo.output())}`);
	return Number(match[1]);
}

/** The fixture shop's address (the banner names its product API). */
function shopUrl(demo: Demo): string {
	return new URL(bannerValue(demo.output(), 'shop').split(' ')[0]).origin;
}

/** The demo's n8n, logged in with the banner's login, as the editor is. */
async function editorClient(demo: Demo, demoFolder: string): Promise<N8nServer> {
	const [email, password] = bannerValue(demo.output(), 'login').split(' (')[0].split(' / ');
	const server = new N8nFolder(await installN8n(), demoFolder).attach(
		bannerValue(demo.output(), 'editor'),
		join(demoFolder, 'n8n.log'),
	);
	// The names only count for a new owner, which npm start has set up already.
	const owner = { email, password, firstName: 'Demo', lastName: 'Owner' };
	expect(await server.ensureOwner(owner)).toBe('kept');
	return server;
}

async function getJson<T>(url: string): Promise<T> {
	const response = await request(url);
	const text = await response.body.text();
	expect(response.statusCode).toBe(200);
	return JSON.parse(text) as T;
}

type Example = WorkflowDefinition & { id: string; file: string; active?: boolean };

function readExamples(): Example[] {
	return readdirSync(join(PROJECT_ROOT, 'examples'))
		.filter((file) => file.endsWith('.json'))
		.sort()
		.map((file) => {
			const text = readFileSync(join(PROJECT_ROOT, 'examples', file), 'utf8');
			return { ...(JSON.parse(text) as Example), file };
		});
}

/** The data tables the examples fill, as `npm start` creates them. */
const DATA_TABLES = [
	{ name: 'Known Product Photos', columns: ['sku', 'md5', 'hashcode'].map(text) },
	{ name: 'Nightly Sync Cursor', columns: ['feed', 'changedUntil'].map(text) },
	{
		name: 'Nightly Sync Photos',
		columns: ['productId', 'url', 'version', 'md5', 'hashcode'].map(text),
	},
	{ name: 'Nightly Sync Products', columns: ['productId', 'version'].map(text) },
	{
		name: 'Nightly Sync Reports',
		columns: [
			text('at'),
			text('summary'),
			number('sent'),
			number('unchanged'),
			number('alertCount'),
			text('alerts'),
		],
	},
];

function text(name: string) {
	return { name, type: 'string' };
}

function number(name: string) {
	return { name, type: 'number' };
}

/** The rows of the demo's data table of that name. */
async function rowsOf(server: N8nServer, name: string): Promise<Array<Record<string, unknown>>> {
	const table = (await server.dataTables()).find((candidate) => candidate.name === name);
	if (!table) throw new Error(`No data table "${name}"`);
	return await server.dataTableRows(table);
}

/**
 * Every example with a Manual Trigger, run as a user runs it: the editor's "Execute workflow"
 * button, from the trigger the editor picks; the type of that trigger and the finished run of each.
 * Each must succeed.
 */
async function runAsTheEditor(
	server: N8nServer,
	examples: Example[],
): Promise<Map<string, { trigger: string; run: StoredExecution }>> {
	const runs = new Map<string, { trigger: string; run: StoredExecution }>();
	for (const example of examples) {
		const nodes = example.nodes as Array<{ name: string; type: string }>;
		if (!nodes.some((node) => node.type === 'n8n-nodes-base.manualTrigger')) continue;
		const name = await server.editorTrigger(example.id);
		const trigger = nodes.find((node) => node.name === name)?.type ?? String(name);
		runs.set(example.file, {
			trigger,
			run: await server.runWorkflow(example.id, { trigger: name }),
		});
	}
	return runs;
}

/** Waits (bounded) until `isUp` says no; false if it still says yes. */
async function untilDown(isUp: () => Promise<boolean>): Promise<boolean> {
	for (let attempt = 0; attempt < 120; attempt++) {
		if (!(await isUp())) return true;
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
	return false;
}

/** Waits (bounded) until nothing answers at `url` any more; false if something still does. */
async function untilClosed(url: string): Promise<boolean> {
	return await untilDown(() => answers(url));
}

async function answers(url: string): Promise<boolean> {
	try {
		const response = await request(`${url}/healthz`);
		await response.body.dump();
		return true;
	} catch {
		return false;
	}
}

/** How many more of each of `routes` the emulator answered between two of its statistics. */
function requestsAdded(
	before: EmulatorStats,
	after: EmulatorStats,
	routes: string[],
): Record<string, number> {
	return Object.fromEntries(
		routes.map((route) => [route, (after.requests[route] ?? 0) - (before.requests[route] ?? 0)]),
	);
}

describe('npm start', () => {
	let demoFolder: string;
	let env: NodeJS.ProcessEnv;
	const running: Demo[] = [];
	const examples = readExamples();
	const night = examples.find((example) => example.file === 'nightly-sync.json');
	const page = examples.find((example) => example.file === 'nightly-sync-page.json');
	const nightWithoutRedis = examples.find(
		(example) => example.file === 'nightly-sync-without-redis.json',
	);
	const pageWithoutRedis = examples.find(
		(example) => example.file === 'nightly-sync-without-redis-page.json',
	);

	beforeAll(async () => {
		demoFolder = mkdtempSync(join(tmpdir(), 'pdi-demo-'));
		env = {
			...process.env,
			N8N_PORT: String(await freePort()),
			N8N_DEMO_FOLDER: demoFolder,
			EMULATOR_PORT: '0',
			// Another demo's shop may hold the examples' port: the examples are pointed at this one.
			SHOP_PORT: '0',
		};
	});

	afterAll(async () => {
		for (const demo of running) {
			if (demo.child.exitCode === null && demo.child.signalCode === null) {
				signal(demo, 'SIGTERM', { group: true });
				await demo.exited;
			}
		}
		rmSync(demoFolder, { recursive: true, force: true });
	});

	test('serves the editor with the emulator credential, the examples, their data tables and shop, and runs each from Execute workflow, until Ctrl-C', async () => {
		const demo = startDemo(env);
		running.push(demo);
		await untilReady(demo);

		const url = bannerValue(demo.output(), 'editor');
		expect(url).toBe(`http://127.0.0.1:${env.N8N_PORT}`);
		const server = await editorClient(demo, demoFolder);
		const { data: credentials } = await server.request<{
			data: Array<{ id: string; name: string }>;
		}>('GET', '/rest/credentials');
		expect(credentials).toEqual([expect.objectContaining(EMULATOR_CREDENTIAL)]);
		const { data: workflows } = await server.request<{
			data: Array<{ id: string; active: boolean }>;
		}>('GET', '/rest/workflows');
		expect(workflows).toHaveLength(examples.length);
		// Those marked active are published in n8n (the nightly syncs' page workflows, which their
		// schedules call), the others not.
		const published = examples.filter((example) => example.active === true);
		expect(published.map((example) => example.file)).toEqual(
			expect.arrayContaining(['nightly-sync-page.json', 'nightly-sync-without-redis-page.json']),
		);
		expect(
			workflows
				.filter((workflow) => workflow.active)
				.map((workflow) => workflow.id)
				.sort(),
		).toEqual(published.map((example) => example.id).sort());
		expect(bannerValue(demo.output(), 'workflows')).toBe(
			`${examples.length} example(s) from examples/, ${published.length} of them published`,
		);
		// Each night's Sync Each Page runs its page workflow by the id it has in n8n.
		for (const [nightExample, pageExample] of [
			[night, page],
			[nightWithoutRedis, pageWithoutRedis],
		]) {
			const { data: nightInN8n } = await server.request<{
				data: { nodes: Array<{ name: string; parameters: { workflowId?: { value: string } } }> };
			}>('GET', `/rest/workflows/${nightExample?.id}`);
			expect(
				nightInN8n.nodes.find((node) => node.name === 'Sync Each Page')?.parameters.workflowId
					?.value,
			).toBe(pageExample?.id);
		}
		expect(
			(await server.dataTables())
				.map(({ name, columns }) => ({ name, columns }))
				.sort((a, b) => a.name.localeCompare(b.name)),
		).toEqual(DATA_TABLES);
		expect(bannerValue(demo.output(), 'data tables')).toBe(
			DATA_TABLES.map((table) => `"${table.name}"`).join(', '),
		);
		expect(await answers(emulatorUrl(demo))).toBe(true);
		expect(await accepts(redisPort(demo))).toBe(true);
		const shop = shopUrl(demo);
		const emulatorBefore = await getJson<EmulatorStats>(`${emulatorUrl(demo)}/__emulator/stats`);

		const runs = await runAsTheEditor(server, examples);
		// The schedule outranks the Manual Trigger in the editor: the nightly examples run from it.
		expect(Object.fromEntries([...runs].map(([file, { trigger }]) => [file, trigger]))).toEqual({
			'catalogue-sync.json': 'n8n-nodes-base.scheduleTrigger',
			'image-upload-known-in-data-table.json': 'n8n-nodes-base.manualTrigger',
			'image-upload-skip-existing.json': 'n8n-nodes-base.manualTrigger',
			'nightly-sync-delta.json': 'n8n-nodes-base.scheduleTrigger',
			'nightly-sync-without-redis.json': 'n8n-nodes-base.scheduleTrigger',
			'nightly-sync.json': 'n8n-nodes-base.scheduleTrigger',
		});
		expect(await rowsOf(server, 'Known Product Photos')).toHaveLength(2);
		// The delta night runs first (in the order of the files): without a cursor, its first night
		// reads the shop's two pages, uploads their 40 photos in an image request each and remembers
		// them, sends its 20 products in one document, keeps its report row and its cursor.
		const deltaNight = runs.get('nightly-sync-delta.json')?.run;
		if (!deltaNight) throw new Error('The delta night did not run');
		expect(nodeItems(deltaNight, 'One Item per Page')).toEqual([
			{ page: 1, updatedSince: '' },
			{ page: 2, updatedSince: '' },
		]);
		const report = {
			at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
			summary: 'Catalogue synced: 20 changed products sent, 1 of 1 sessions confirmed, 0 unchanged',
			sent: 20,
			unchanged: 0,
			alertCount: 0,
			alerts: '',
		};
		expect(nodeItems(deltaNight, 'Night Report')).toEqual([report]);
		expect(await rowsOf(server, 'Nightly Sync Cursor')).toEqual([
			expect.objectContaining({ feed: 'products', changedUntil: expect.any(String) }),
		]);
		// The night without Redis runs next: its own memory of the products is empty, so it sends
		// the 20 products again, in one document per page; the photos' table is shared, so it
		// uploads no photo.
		const nightWithoutRedisRun = runs.get('nightly-sync-without-redis.json')?.run;
		if (!nightWithoutRedisRun) throw new Error('The nightly sync without Redis did not run');
		const reportWithoutRedis = {
			...report,
			summary: 'Catalogue synced: 20 changed products sent, 2 of 2 sessions confirmed, 0 unchanged',
		};
		expect(nodeItems(nightWithoutRedisRun, 'Night Report')).toEqual([reportWithoutRedis]);
		expect(await rowsOf(server, 'Nightly Sync Products')).toHaveLength(20);
		// The whole-catalogue night after them shares the delta night's page workflow and its
		// memory: the same two pages, their photos and products known, nothing to send.
		const firstNight = runs.get('nightly-sync.json')?.run;
		if (!firstNight) throw new Error('The nightly sync did not run');
		expect(nodeItems(firstNight, 'One Item per Page')).toEqual([{ page: 1 }, { page: 2 }]);
		const quietReport = {
			...report,
			summary:
				'Nothing to send: the service has confirmed all 20 products read tonight as they are now.',
			sent: 0,
			unchanged: 20,
		};
		expect(nodeItems(firstNight, 'Night Report')).toEqual([quietReport]);
		const reports = await rowsOf(server, 'Nightly Sync Reports');
		expect(reports).toEqual([
			expect.objectContaining(report),
			expect.objectContaining(reportWithoutRedis),
			expect.objectContaining(quietReport),
		]);
		expect(await rowsOf(server, 'Nightly Sync Photos')).toHaveLength(40);
		const shopStats = await getJson<{ requests: Record<string, number>; photosSent: number }>(
			`${shop}/__shop/stats`,
		);
		expect(shopStats).toMatchObject({
			requests: { 'GET /api/products': 9, 'GET /photos/{photo}': 40 },
			photosSent: 40,
		});
		const emulatorAfter = await getJson<EmulatorStats>(`${emulatorUrl(demo)}/__emulator/stats`);
		// Each page's photos in one request, the two image examples' one each, the catalogue's and the
		// delta night's documents, and one per page of the night without Redis.
		expect(emulatorAfter.images - emulatorBefore.images).toBe(44);
		expect(
			requestsAdded(emulatorBefore, emulatorAfter, ['POST /api/images', 'PUT /api/xml']),
		).toEqual({ 'POST /api/images': 4, 'PUT /api/xml': 4 });

		signal(demo, 'SIGINT', { group: true });
		await demo.exited;

		expect(await untilClosed(url)).toBe(true);
		expect(await untilClosed(emulatorUrl(demo))).toBe(true);
		expect(await untilClosed(shop)).toBe(true);
		expect(await untilDown(() => accepts(redisPort(demo)))).toBe(true);
		expect(demo.output()).toContain('Stopping n8n');
	});

	test('starts again on the same demo folder, keeping its owner and the rows of its data tables', async () => {
		const demo = startDemo(env);
		running.push(demo);
		await untilReady(demo);

		const url = bannerValue(demo.output(), 'editor');
		expect(bannerValue(demo.output(), 'login')).toContain('the owner of an earlier start');
		const server = await editorClient(demo, demoFolder);
		const { data: credentials } = await server.request<{ data: Array<{ id: string }> }>(
			'GET',
			'/rest/credentials',
		);
		expect(credentials.map((credential) => credential.id)).toEqual([EMULATOR_CREDENTIAL.id]);
		expect((await server.dataTables()).map((table) => table.name).sort()).toEqual(
			DATA_TABLES.map((table) => table.name),
		);
		expect(await rowsOf(server, 'Nightly Sync Reports')).toHaveLength(3);
		expect(await rowsOf(server, 'Nightly Sync Photos')).toHaveLength(40);
		expect(await rowsOf(server, 'Nightly Sync Products')).toHaveLength(20);

		// As a process manager stops it: npm alone is told, n8n, the emulator, the shop and Redis go
		// all the same.
		signal(demo, 'SIGTERM', { group: false });
		await demo.exited;

		expect(await untilClosed(url)).toBe(true);
		expect(await untilClosed(emulatorUrl(demo))).toBe(true);
		expect(await untilClosed(shopUrl(demo))).toBe(true);
		expect(await untilDown(() => accepts(redisPort(demo)))).toBe(true);
	});
});
