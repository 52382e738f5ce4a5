/**
 * The whole nightly sync (examples/nightly-sync.json, which runs examples/nightly-sync-page.json
 * for each page of products) in a real n8n, three nights, with an n8n restart before each: what a
 * catalogue of N products with 2 photos each costs n8n and the service's request budget, the way
 * n8n runs by default. Night 1 is the first sync, night 2 a re-sync with nothing changed, night 3 a
 * re-sync after the shop changed BENCH_CHANGED_PHOTOS photos.
 *
 * - n8n: the pinned version, the packed package installed as a user installs it, `n8n start` with
 *   n8n's default settings (regular mode, SQLite, binary data in the file system), through the driver
 *   of a real n8n (scripts/n8n). Both workflows are published and each night is a production run, as
 *   the schedule starts it: a Webhook node takes the Schedule Trigger's place, so that the night
 *   starts when the benchmark calls it. A production run keeps to the example's Workflow settings:
 *   a successful night is not kept in n8n's database, its record is the row Keep Night Report adds.
 * - The service: the emulator, in this process, with the service's bucket (50) leaking every 1 ms so
 *   that the nights take minutes, and the credential's Custom Rate Limit set to the same; images
 *   stay in it from one night to the next, as on the service.
 * - Redis (scripts/redis.ts, a redis-server of its own for all nights): the credential's Rate Limit
 *   Sharing, where each page's Upload Changed Products remembers its products and collects the
 *   changed ones for the night's Send Collected Products.
 * - The workflow's memory of photos: the example's data table, created through n8n's REST API as a
 *   user creates it in the editor, before the first night.
 * - The shop: scripts/shop, the product API the workflow pages through and the photo host its Image
 *   Upload fetches from, in a process of its own (`npm run shop`): its open files must not count
 *   against this process (its memory sampler reads /proc) nor the emulator's. It stops when this
 *   process ends; its change-photos control route changes photos before night 3.
 *
 * Per night, one JSON line: wall time (from the call that starts it to its end; per node with
 * BENCH_KEEP_NIGHTS=1, which keeps the night's execution for it), peak memory of the n8n process
 * tree (VmRSS of n8n and its children summed every 50 ms, bench/n8n-memory.ts) and of the n8n
 * process itself, requests per route at the emulator, downloads at the photo host, growth of n8n's
 * binary-data folder and database, the execution data the night left in it (and, kept, each node's
 * share of it), the night's report, the products the night sent and whether each had its photos'
 * hashcodes; beside them the night's targets (known images that outlive a restart, photos fetched
 * by URL only when they changed, only changed products sent), and whether the night met them. With
 * a photo host latency, how long the night waited for the host against the waiting of one photo
 * request after another, and the target of an eighth of it; and always the catalogue-scale targets
 * (the n8n process under 2 GB, a quiet night within 5 minutes, at most 20 MB of execution data a
 * night), apart, as they are meant for 100,000 products.
 *
 * Needs Node 24 (scripts/toolchain.sh) and the package packed: E2E_PACKAGE_TGZ names the tarball,
 * else the script builds and packs it itself. Installs n8n on its first run.
 * BENCH_PRODUCTS (10000), BENCH_PHOTO_BYTES (20000), BENCH_TIMEOUT_MINUTES (60, per night),
 * BENCH_CHANGED_PHOTOS (1 % of the photos, at least 1; the photos changed before night 3),
 * BENCH_PHOTO_LATENCY_MS and BENCH_API_LATENCY_MS (0: the milliseconds the shop's photo host and
 * product API wait before each answer), BENCH_PHOTO_VERSIONS (1; 0: the products list their photos
 * without a version, so every night revalidates each photo by its ETag), BENCH_KEEP_NIGHTS (0; 1:
 * each night's execution is kept, as Save successful production executions would, for the time and
 * data of each node; the night's figures are then those of a kept night).
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
	existsSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { XMLParser } from 'fast-xml-parser';
import { request } from 'undici';

import { DEFAULT_ACCOUNT, startEmulator, type Emulator } from '../scripts/emulator';
import { call } from '../scripts/emulator/client';
import { emulatorCredential, sharingInRedis } from '../scripts/n8n/credential';
import {
	installN8n,
	n8nVersion,
	N8nFolder,
	packPackage,
	PROJECT_ROOT,
} from '../scripts/n8n/instance';
import { killGroup, sleep, tail, track, untrack } from '../scripts/n8n/processes';
import { runError } from '../scripts/n8n/run-data';
import { startRedis, type RedisServer } from '../scripts/redis';
import { dataTablesFilled } from '../scripts/n8n/workflows';
import type {
	DataTable,
	ExecutionSummary,
	N8nServer,
	Owner,
	StoredExecution,
	WorkflowDefinition,
} from '../scripts/n8n/server';
import {
	photoBytes,
	photoId,
	productId,
	SHOP_CONTROL_PREFIX,
	type ShopStats,
} from '../scripts/shop';
import { startSampler } from './n8n-memory';

function positiveInteger(name: string, fallback: number): number {
	const value = Number(process.env[name] ?? fallback);
	if (!Number.isInteger(value) || value <= 0)
		throw new Error(`${name} must be a positive integer, got "${process.env[name]}"`);
	return value;
}

function milliseconds(name: string): number {
	const value = Number(process.env[name] ?? 0);
	if (!Number.isInteger(value) || value < 0)
		throw new Error(
			`${name} must be a whole number of milliseconds from 0, got "${process.env[name]}"`,
		);
	return value;
}

const PRODUCTS = positiveInteger('BENCH_PRODUCTS', 10_000);
const PHOTOS_PER_PRODUCT = 2;
const PHOTO_BYTES = positiveInteger('BENCH_PHOTO_BYTES', 20_000);
const NIGHT_TIMEOUT_MS = positiveInteger('BENCH_TIMEOUT_MINUTES', 60) * 60_000;
const PHOTO_LATENCY_MS = milliseconds('BENCH_PHOTO_LATENCY_MS');
const API_LATENCY_MS = milliseconds('BENCH_API_LATENCY_MS');
const PHOTO_VERSIONS = process.env.BENCH_PHOTO_VERSIONS !== '0';
const KEEP_NIGHTS = process.env.BENCH_KEEP_NIGHTS === '1';
/** A night from a host with latency waits at most this share of one photo request after another. */
const WAITING_TARGET = 1 / 8;
/** The catalogue-scale targets: what one n8n on a host with 8 GB can give the sync. */
const SCALE_TARGETS = { mainPeakMb: 2048, quietNightSeconds: 300, executionDataMb: 20 };
/** B: Image Upload's default Images Per Request, which the example keeps. */
const IMAGES_PER_REQUEST = 50;
const BUCKET_CAPACITY = 50;
/** The service's real pace: one request more every 5 s once the bucket is full. */
const REAL_LEAK_SECONDS = 5;

const CHANGED_PHOTOS = positiveInteger(
	'BENCH_CHANGED_PHOTOS',
	Math.max(1, Math.floor((PRODUCTS * PHOTOS_PER_PRODUCT) / 100)),
);

const WORKFLOW_FILE = join(PROJECT_ROOT, 'examples', 'nightly-sync.json');
const PAGE_WORKFLOW_FILE = join(PROJECT_ROOT, 'examples', 'nightly-sync-page.json');
/** The nodes that read the shop's product API: the night's, for the pages, and each page's. */
const PRODUCTS_NODES = { [WORKFLOW_FILE]: 'First Page', [PAGE_WORKFLOW_FILE]: 'Get Page' };
const SCHEDULE_NODE = 'Every Night at 2';
/** What starts a night in the benchmark, in the Schedule Trigger's place. */
const NIGHT_WEBHOOK = {
	name: 'Night Started by the Benchmark',
	type: 'n8n-nodes-base.webhook',
	typeVersion: 2,
	webhookId: '5d0c9f7e-2b1a-4c3d-9e8f-7a6b5c4d3e2f',
	parameters: {
		httpMethod: 'POST',
		path: 'sync-n8n-night',
		responseMode: 'onReceived',
		options: {},
	},
};
/**
 * The night's node that runs the page workflow, where the photos are taken: the pages' executions
 * are not kept, so its time is the photos' (with the pages' reading and the data table's).
 */
const PAGES_NODE = 'Sync Each Page';
const PHOTO_ROUTE = 'GET /photos/{photo}';
/** Where the example expects the shop (`npm run shop`); the benchmark's shop listens elsewhere. */
const EXAMPLE_SHOP_HOST = '127.0.0.1:8472';

const OWNER: Owner = {
	email: 'bench@example.com',
	firstName: 'Bench',
	lastName: 'Owner',
	password: 'Local-bench-password-1',
};

const MB = 1024 * 1024;
const mb = (bytes: number) => Math.round((bytes / MB) * 10) / 10;

type ImportedWorkflow = WorkflowDefinition & { id: string };

/**
 * The example's two workflows as a user imports them (keeping their ids, so that the night's Sync
 * Each Page names the page workflow), pointed at the fixture shop wherever they name the shop's host
 * (its product API, and the photo host the page's Upload Photo allows). The night starts from a
 * webhook in place of the Schedule Trigger; with BENCH_KEEP_NIGHTS, its successful executions are
 * kept.
 */
function nightlySync(
	shopUrl: string,
	productsUrl: string,
): { workflow: ImportedWorkflow; pageWorkflow: ImportedWorkflow } {
	const shopHost = new URL(shopUrl).host;
	const read = (file: string) => {
		const workflow = JSON.parse(
			readFileSync(file, 'utf8').replaceAll(EXAMPLE_SHOP_HOST, shopHost),
		) as ImportedWorkflow;
		const nodes = workflow.nodes as Array<{ name: string; parameters: Record<string, unknown> }>;
		const node = (name: string) => {
			const found = nodes.find((candidate) => candidate.name === name);
			if (!found) throw new Error(`${file} has no node "${name}"`);
			return found;
		};
		node(PRODUCTS_NODES[file]).parameters.url = productsUrl;
		return { workflow, node };
	};
	const { workflow, node: nightNode } = read(WORKFLOW_FILE);
	const { workflow: pageWorkflow, node } = read(PAGE_WORKFLOW_FILE);
	// The shop is on this machine: its photo host is named in Allowed Internal Hosts, as the example's note says.
	(node('Upload Photo').parameters.options as Record<string, unknown>).allowedInternalHosts =
		new URL(productsUrl).host;
	const schedule = nightNode(SCHEDULE_NODE) as unknown as Record<string, unknown>;
	const { [SCHEDULE_NODE]: fromSchedule, ...connections } = workflow.connections as Record<
		string,
		unknown
	>;
	workflow.nodes = workflow.nodes.map((candidate) =>
		candidate === schedule
			? { ...NIGHT_WEBHOOK, id: schedule.id, position: schedule.position }
			: candidate,
	);
	workflow.connections = { ...connections, [NIGHT_WEBHOOK.name]: fromSchedule };
	if (KEEP_NIGHTS)
		workflow.settings = {
			...(workflow.settings as Record<string, unknown>),
			saveDataSuccessExecution: 'all',
		};
	return { workflow, pageWorkflow };
}

interface ShopProcess {
	url: string;
	productsUrl: string;
	stats(): Promise<ShopStats>;
	resetStats(): Promise<void>;
	/** Gives the first `count` photos a new version; their ids. */
	changePhotos(count: number): Promise<string[]>;
	stop(): Promise<void>;
}

const SHOP_START_TIMEOUT_MS = 60_000;

/** `npm run shop` on a free port, with this benchmark's catalogue; ready when resolved. */
async function startShopProcess(folder: string): Promise<ShopProcess> {
	const readyFile = join(folder, 'shop.json');
	const child = spawn(
		process.execPath,
		['--import', 'tsx', join(PROJECT_ROOT, 'scripts', 'shop', 'cli.ts')],
		{
			cwd: PROJECT_ROOT,
			env: {
				...process.env,
				SHOP_PORT: '0',
				SHOP_PRODUCTS: String(PRODUCTS),
				SHOP_PHOTO_BYTES: String(PHOTO_BYTES),
				SHOP_PHOTO_LATENCY_MS: String(PHOTO_LATENCY_MS),
				SHOP_API_LATENCY_MS: String(API_LATENCY_MS),
				SHOP_PHOTO_VERSIONS: PHOTO_VERSIONS ? '1' : '0',
				SHOP_READY_FILE: readyFile,
			},
			detached: true,
			stdio: ['ignore', 'ignore', 'inherit'],
		},
	);
	track(child);
	const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	const deadline = Date.now() + SHOP_START_TIMEOUT_MS;
	while (!existsSync(readyFile)) {
		if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
			killGroup(child, 'SIGKILL');
			throw new Error('The shop did not start');
		}
		await sleep(100);
	}
	const { url, productsUrl } = JSON.parse(readFileSync(readyFile, 'utf8')) as {
		url: string;
		productsUrl: string;
	};
	const control = async <T>(method: 'GET' | 'POST', route: string): Promise<T> => {
		const response = await request(`${url}${SHOP_CONTROL_PREFIX}${route}`, { method });
		if (response.statusCode !== 200)
			throw new Error(`The shop answered ${route} with ${response.statusCode}`);
		return (await response.body.json()) as T;
	};
	return {
		url,
		productsUrl,
		stats: () => control<ShopStats>('GET', 'stats'),
		resetStats: async () => {
			await control('POST', 'reset-stats');
		},
		changePhotos: async (count) =>
			(await control<{ changed: string[] }>('POST', `change-photos?count=${count}`)).changed,
		stop: async () => {
			killGroup(child, 'SIGTERM');
			await exited;
			untrack(child);
		},
	};
}

/** Bytes and files below a folder (0 when it does not exist). */
function folderSize(path: string): { bytes: number; files: number } {
	let bytes = 0;
	let files = 0;
	let entries: string[];
	try {
		entries = readdirSync(path, { recursive: true, encoding: 'utf8' });
	} catch {
		return { bytes, files };
	}
	for (const entry of entries) {
		const stat = statSync(join(path, entry), { throwIfNoEntry: false });
		if (stat?.isFile()) {
			bytes += stat.size;
			files++;
		}
	}
	return { bytes, files };
}

function subtract(after: Record<string, number>, before: Record<string, number>) {
	const delta: Record<string, number> = {};
	for (const [route, count] of Object.entries(after)) {
		const added = count - (before[route] ?? 0);
		if (added > 0) delta[route] = added;
	}
	return delta;
}

interface Night {
	status: string;
	seconds: number;
	/** The row Keep Night Report added; undefined when the night failed. */
	report?: Record<string, unknown>;
	/** The executions of the night's workflow that n8n kept (a failed night, or BENCH_KEEP_NIGHTS). */
	kept: StoredExecution[];
}

/**
 * Starts a night as its schedule would (a production run, through the webhook in the Schedule
 * Trigger's place) and waits for its end: its report's row, or a failed execution of the workflow,
 * and no execution of it running. Its seconds are from the call to the end seen (polled every 0.5 s).
 */
async function runNight(server: N8nServer, workflowId: string, reports: DataTable): Promise<Night> {
	const reportsBefore = (await server.dataTableRows(reports)).length;
	const keptBefore = new Set((await server.listExecutions({ workflowId })).map(({ id }) => id));
	const started = performance.now();
	const response = await request(`${server.url}/webhook/${NIGHT_WEBHOOK.parameters.path}`, {
		method: 'POST',
	});
	await response.body.dump();
	if (response.statusCode !== 200)
		throw new Error(`The night's webhook answered ${response.statusCode}`);
	const deadline = Date.now() + NIGHT_TIMEOUT_MS;
	for (;;) {
		await sleep(500);
		// An n8n out of open files (EMFILE) refuses connections to its REST API too, for a while: the
		// night goes on, so does the waiting.
		const rows = await server.dataTableRows(reports).catch(() => undefined);
		const executions = await server
			.listExecutions({ workflowId })
			.catch(() => [] as ExecutionSummary[]);
		const inFlight = (status: string) => ['new', 'running', 'waiting'].includes(status);
		const ended = executions.filter(({ id, status }) => !keptBefore.has(id) && !inFlight(status));
		const report = rows && rows.length > reportsBefore ? rows[rows.length - 1] : undefined;
		const failed = ended.some(({ status }) => status !== 'success');
		// n8n lists a night while it runs, and forgets it at its end unless it keeps it.
		const running = executions.some(({ status }) => inFlight(status));
		if ((report || failed) && !running) {
			const seconds = (performance.now() - started) / 1000;
			const kept = await Promise.all(ended.map(({ id }) => server.getExecution(id)));
			return { status: failed ? 'error' : 'success', seconds, report, kept };
		}
		if (Date.now() > deadline)
			throw new Error(`The night did not end within ${NIGHT_TIMEOUT_MS} ms`);
	}
}

/**
 * How long a night waited for the photo host, against one photo request after another: the host's
 * busy time (at least one photo request in flight) over photo requests × latency. About 1 when
 * photos are fetched one at a time; 1/8 when eight are always in flight. With a kept night, the
 * same for the time of the node that runs the pages, where the photos are taken.
 */
function photoWaiting(shopStats: ShopStats, pagesNodeSeconds: number | undefined) {
	const photoRequests = shopStats.requests[PHOTO_ROUTE] ?? 0;
	const sequentialSeconds = (photoRequests * PHOTO_LATENCY_MS) / 1000;
	const ratio = (seconds: number) => Math.round((seconds / sequentialSeconds) * 1000) / 1000;
	return {
		latencyMs: PHOTO_LATENCY_MS,
		photoRequests,
		sequentialSeconds,
		hostBusySeconds: Math.round(shopStats.photoBusyMs / 100) / 10,
		waitingRatio: ratio(shopStats.photoBusyMs / 1000),
		peakInFlight: shopStats.photosInFlightPeak,
		meanInFlight:
			shopStats.photoBusyMs > 0
				? Math.round((shopStats.photoRequestMs / shopStats.photoBusyMs) * 10) / 10
				: 0,
		...(pagesNodeSeconds !== undefined
			? { pagesNodeSeconds, pagesNodeRatio: ratio(pagesNodeSeconds) }
			: {}),
		target: WAITING_TARGET,
	};
}

/** What a night is to meet; only the figures that apply to it. */
interface Targets {
	imageRequests?: number;
	requests?: number;
	photosDownloaded?: number;
	binaryDataGrowthMb?: number;
	productsReceived: number;
	/** The share of the sequential waiting for photos (with a photo host latency only). */
	waitingRatio?: number;
}

interface Received {
	products: number;
	productsWithAllHashcodes: number;
	wrongHashcodes: number;
}

/**
 * The products the service received in the night's documents (those after the first
 * `uploadsBefore`), each with the hashcodes the service gave its photos at their current version
 * (by the md5 of the bytes the shop serves).
 */
async function checkCatalogue(
	emulator: Emulator,
	uploadsBefore: number,
	versionOf: (photo: string) => number,
): Promise<Received> {
	const received: Received = { products: 0, productsWithAllHashcodes: 0, wrongHashcodes: 0 };
	for (const upload of emulator.uploads().slice(uploadsBefore)) {
		const { products, productsWithAllHashcodes, wrongHashcodes } = await checkDocument(
			emulator,
			upload.id,
			versionOf,
		);
		received.products += products;
		received.productsWithAllHashcodes += productsWithAllHashcodes;
		received.wrongHashcodes += wrongHashcodes;
	}
	return received;
}

async function checkDocument(
	emulator: Emulator,
	sessionId: string,
	versionOf: (photo: string) => number,
): Promise<Received> {
	const file = await call(emulator, 'GET', `/api/files/${sessionId}`);
	const parsed = new XMLParser({
		isArray: (name) => name === 'Product' || name === 'ImageHashcode',
		parseTagValue: false,
	}).parse(file.text) as {
		Products: { Product?: Array<{ Id: string; Images?: { ImageHashcode?: string[] } }> };
	};
	const hashcodeOf = new Map(emulator.images().map((image) => [image.md5, image.hashcode]));
	const products = parsed.Products.Product ?? [];
	let productsWithAllHashcodes = 0;
	let wrongHashcodes = 0;
	for (const product of products) {
		const index = Number(product.Id.slice(1)) - 1;
		const received = product.Images?.ImageHashcode ?? [];
		const expected = Array.from({ length: PHOTOS_PER_PRODUCT }, (_, photoIndex) => {
			const photo = photoId(index, photoIndex);
			const bytes = photoBytes(photo, versionOf(photo), PHOTO_BYTES);
			const md5 = createHash('md5').update(bytes).digest('hex');
			return hashcodeOf.get(md5);
		});
		const wrong = expected.filter((hashcode, position) => received[position] !== hashcode).length;
		wrongHashcodes += wrong;
		if (wrong === 0 && received.length === PHOTOS_PER_PRODUCT && product.Id === productId(index))
			productsWithAllHashcodes++;
	}
	return { products: products.length, productsWithAllHashcodes, wrongHashcodes };
}

async function main(): Promise<void> {
	if (Number(process.versions.node.split('.')[0]) < 24) {
		throw new Error(
			`n8n 2.x needs Node 24, this is Node ${process.versions.node}: run it with the toolchain of scripts/toolchain.sh`,
		);
	}
	const photos = PRODUCTS * PHOTOS_PER_PRODUCT;
	const folder = realpathSync(mkdtempSync(join(tmpdir(), 'sync-n8n-')));
	let emulator: Emulator | undefined;
	let shop: ShopProcess | undefined;
	let redis: RedisServer | undefined;
	let server: N8nServer | undefined;
	try {
		const tarball = process.env.E2E_PACKAGE_TGZ ?? packPackage(join(folder, 'pack'));
		const n8nBin = await installN8n();
		const n8n = await N8nFolder.create(n8nBin, join(folder, 'n8n'), tarball);
		emulator = await startEmulator({
			processingMs: 0,
			bucketCapacity: BUCKET_CAPACITY,
			leakIntervalMs: 1,
		});
		shop = await startShopProcess(folder);
		redis = await startRedis();
		await n8n.importCredentials([
			emulatorCredential(emulator.url, DEFAULT_ACCOUNT, {
				customRateLimit: true,
				bucketCapacity: BUCKET_CAPACITY,
				leakIntervalSeconds: 0.001,
				...sharingInRedis(redis),
			}),
		]);
		const { workflow, pageWorkflow } = nightlySync(shop.url, shop.productsUrl);
		let reports: DataTable | undefined;
		const versions = new Map<string, number>();
		const versionOf = (photo: string) => versions.get(photo) ?? 1;
		// n8n 2.x keeps binary data in .n8n/storage, or in .n8n/binaryData where an older n8n left it.
		const legacyBinaryFolder = join(n8n.path, '.n8n', 'binaryData');
		const binaryFolder = existsSync(legacyBinaryFolder)
			? legacyBinaryFolder
			: join(n8n.path, '.n8n', 'storage');
		// With its write-ahead log, which holds what was written since the last checkpoint.
		const databaseBytes = () =>
			['database.sqlite', 'database.sqlite-wal'].reduce(
				(sum, name) =>
					sum + (statSync(join(n8n.path, '.n8n', name), { throwIfNoEntry: false })?.size ?? 0),
				0,
			);

		for (const night of ['first', 'resync-after-restart', 'changed-after-restart'] as const) {
			server = await n8n.start();
			await server.ensureOwner(OWNER);
			if (night === 'first') {
				// The tables as a user creates them, with the columns the example's inserts name: the
				// page workflow's photos, the night's reports.
				for (const { name, columns } of dataTablesFilled(pageWorkflow))
					await server.createDataTable(name, columns);
				const [reportsTable] = dataTablesFilled(workflow);
				reports = await server.createDataTable(reportsTable.name, reportsTable.columns);
				await server.createWorkflow(pageWorkflow);
				await server.createWorkflow(workflow);
				// Published, as the schedule needs them: production runs call the page workflow's
				// published version.
				await server.activateWorkflow(pageWorkflow.id);
				await server.activateWorkflow(workflow.id);
			}
			if (!reports) throw new Error('The reports table was not created');
			const changedPhotos =
				night === 'changed-after-restart' ? await shop.changePhotos(CHANGED_PHOTOS) : [];
			for (const photo of changedPhotos) versions.set(photo, versionOf(photo) + 1);
			const changedProducts = new Set(changedPhotos.map((photo) => photo.split('-')[0])).size;
			// n8n at rest, started and logged in: what the night adds is measured against it.
			const idle = startSampler(/ n8n start /);
			await sleep(2000);
			const baseline = await idle();

			const requestsBefore = emulator.stats().requests;
			const uploadsBefore = emulator.uploads().length;
			const binaryBefore = folderSize(binaryFolder);
			const databaseBefore = databaseBytes();
			await shop.resetStats();
			const stop = startSampler(/ n8n start /);
			let ran: Awaited<ReturnType<typeof runNight>>;
			try {
				ran = await runNight(server, workflow.id, reports);
			} catch (error) {
				await stop();
				throw error;
			}
			const sampled = await stop();
			const requests = subtract(emulator.stats().requests, requestsBefore);
			const binaryAfter = folderSize(binaryFolder);
			const shopStats = await shop.stats();

			// What the night left in n8n's database: nothing, unless it failed or BENCH_KEEP_NIGHTS.
			const executionBytes = ran.kept.reduce((sum, execution) => sum + execution.dataBytes, 0);
			const [execution] = ran.kept;
			const error = execution ? runError(execution.data) : undefined;
			const ranNodes = execution ? execution.data.resultData.runData : {};
			const received = await checkCatalogue(emulator, uploadsBefore, versionOf);

			// Each node's share of the execution data, as JSON: n8n stores it flattened, which writes a
			// repeated string once, so these add up to more than executionDataMb.
			const nodeDataMb = Object.fromEntries(
				Object.entries(ranNodes).map(([name, runs]) => [
					name,
					mb(Buffer.byteLength(JSON.stringify(runs.map((run) => run.data ?? null)))),
				]),
			);
			const nodeSeconds = Object.fromEntries(
				Object.entries(ranNodes).map(([name, runs]) => [
					name,
					Math.round(runs.reduce((sum, run) => sum + (run.executionTime ?? 0), 0) / 100) / 10,
				]),
			);
			const waiting =
				PHOTO_LATENCY_MS > 0 && (shopStats.requests[PHOTO_ROUTE] ?? 0) > 0
					? photoWaiting(shopStats, nodeSeconds[PAGES_NODE])
					: undefined;
			const imageRequests =
				(requests['POST /api/images'] ?? 0) + (requests['GET /api/images'] ?? 0);
			const totalRequests = Object.values(requests).reduce((sum, count) => sum + count, 0);
			const binaryGrowth = binaryAfter.bytes - binaryBefore.bytes;
			const notGrowing = binaryGrowth < MB;
			const nightTargets: Targets =
				night === 'first'
					? {
							imageRequests: Math.ceil(photos / IMAGES_PER_REQUEST) + 10,
							productsReceived: PRODUCTS,
						}
					: night === 'resync-after-restart'
						? { requests: 10, photosDownloaded: 0, binaryDataGrowthMb: 0, productsReceived: 0 }
						: {
								requests: Math.ceil(changedPhotos.length / IMAGES_PER_REQUEST) + 5,
								photosDownloaded: changedPhotos.length,
								binaryDataGrowthMb: 0,
								productsReceived: changedProducts,
							};
			const targets: Targets = waiting
				? { ...nightTargets, waitingRatio: WAITING_TARGET }
				: nightTargets;
			const met = {
				...(targets.imageRequests !== undefined
					? { imageRequests: imageRequests <= targets.imageRequests }
					: {}),
				...(targets.requests !== undefined ? { requests: totalRequests <= targets.requests } : {}),
				...(targets.photosDownloaded !== undefined
					? { photosDownloaded: shopStats.photosSent <= targets.photosDownloaded }
					: {}),
				// A few KB of n8n's own bookkeeping would not be the photos: under 1 MB counts as not growing.
				...(targets.binaryDataGrowthMb !== undefined ? { binaryDataGrowthMb: notGrowing } : {}),
				productsReceived:
					received.products === targets.productsReceived &&
					received.productsWithAllHashcodes === received.products,
				...(waiting ? { waitingRatio: waiting.waitingRatio <= WAITING_TARGET } : {}),
			};
			const main = sampled.processes.find((entry) => entry.pid === sampled.mainPid);
			const mainPeakMb = mb((main?.hwmKb ?? 0) * 1024);
			const executionDataMb = mb(executionBytes);
			const quiet = night === 'resync-after-restart';
			process.stdout.write(
				`${JSON.stringify({
					night,
					n8n: n8nVersion(n8nBin),
					products: PRODUCTS,
					photos,
					photoBytes: PHOTO_BYTES,
					batchSize: IMAGES_PER_REQUEST,
					photoLatencyMs: PHOTO_LATENCY_MS,
					apiLatencyMs: API_LATENCY_MS,
					photoVersions: PHOTO_VERSIONS,
					changedPhotos: changedPhotos.length,
					status: ran.status,
					...(error ? { error: `${error.node ?? ''}: ${error.message}` } : {}),
					seconds: Math.round(ran.seconds * 10) / 10,
					peak_rss_mb: mb(sampled.peakKb * 1024),
					idle_rss_mb: mb(baseline.peakKb * 1024),
					main_hwm_mb: mainPeakMb,
					max_processes: sampled.maxProcesses,
					requests,
					totalRequests,
					imageRequests,
					bucketSeconds: Math.max(0, totalRequests - BUCKET_CAPACITY) * REAL_LEAK_SECONDS,
					shopRequests: shopStats.requests,
					photosDownloaded: shopStats.photosSent,
					photosNotModified: shopStats.notModified,
					downloadedMb: mb(shopStats.photoBytesSent),
					binaryDataGrowthMb: mb(binaryGrowth),
					binaryDataFiles: binaryAfter.files - binaryBefore.files,
					databaseGrowthMb: mb(databaseBytes() - databaseBefore),
					executionDataMb,
					productsReceived: received.products,
					report: ran.report,
					productsWithAllHashcodes: received.productsWithAllHashcodes,
					wrongHashcodes: received.wrongHashcodes,
					...(execution ? { nodeSeconds, nodeDataMb } : {}),
					...(waiting ? { photoWaiting: waiting } : {}),
					targets,
					met,
					scaleTargets: {
						mainPeakMb: SCALE_TARGETS.mainPeakMb,
						executionDataMb: SCALE_TARGETS.executionDataMb,
						...(quiet ? { seconds: SCALE_TARGETS.quietNightSeconds } : {}),
					},
					scaleMet: {
						mainPeakMb: mainPeakMb < SCALE_TARGETS.mainPeakMb,
						executionDataMb: executionDataMb <= SCALE_TARGETS.executionDataMb,
						...(quiet ? { seconds: ran.seconds <= SCALE_TARGETS.quietNightSeconds } : {}),
					},
				})}\n`,
			);
			await server.stop();
			server = undefined;
		}
	} catch (error) {
		// What n8n said last is usually why the night failed.
		if (server) process.stderr.write(`n8n's log ends with:\n${tail(server.log())}\n`);
		throw error;
	} finally {
		await server?.stop();
		await shop?.stop();
		await redis?.stop();
		await emulator?.close();
		rmSync(folder, { recursive: true, force: true });
	}
}

main().then(
	() => process.exit(0),
	(error: unknown) => {
		process.stderr.write(
			`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
		);
		process.exit(1);
	},
);
