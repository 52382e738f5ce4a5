/**
 * Memory of a real n8n (the pinned version, the packed package installed as a user installs it)
 * while a workflow uploads a large XML file, as a user's workflow does it:
 *
 *   Manual Trigger -> Wait (settle) -> Read/Write Files from Disk (read the file) -> Upload
 *
 * run with `n8n execute` through the driver of a real n8n (scripts/n8n). Two uploads are compared:
 * - `node`: the package's node, Document > Upload from Binary File, Validate Before Upload on;
 * - `http-request`: n8n's own HTTP Request node doing the same PUT /api/xml with the binary file as
 *   body (Basic auth and customer headers as plain headers, redirects off), the way a user would
 *   upload without the package.
 *
 * While a run lasts, a worker thread (its own event loop, so the emulator's work on this process's
 * main thread does not delay it) adds up VmRSS of the `n8n execute` process and everything it
 * starts (the task runner, short-lived helpers) every 50 ms. The emulator runs in this process, so
 * the copy of the body it receives is not counted. Each variant runs twice, first with a tiny
 * file, whose peak is the baseline (n8n's own start-up and run), then with the large one:
 * growth = large peak - tiny peak. The kernel's high-water mark (VmHWM) of the `n8n execute`
 * process alone is reported as well: it catches a spike between two samples.
 *
 * The Wait node lets n8n finish starting before the file is read: for a few seconds after the run
 * begins the task runner and n8n itself still grow, and a tiny run ends before that is over, so
 * without the wait the difference would mostly be n8n's start-up (BENCH_SETTLE_SECONDS=0 shows it).
 * A long-running n8n (`n8n start`) is always settled.
 *
 * n8n 2.x lets nodes read files only below N8N_RESTRICT_FILE_ACCESS_TO (default ~/.n8n-files), never
 * inside its own folder: the files are written to a temporary folder which the n8n runs get as
 * that variable. Binary data stays in n8n's default mode (filesystem in 2.x, unless queue mode);
 * each line says which store the file went to, read from the ID n8n gave it.
 *
 * Needs Node 24 (scripts/toolchain.sh) and the package packed: E2E_PACKAGE_TGZ names the tarball,
 * else the script builds and packs it itself, as `npm run test:e2e` does. Installs n8n on its first run
 * (scripts/install-n8n.sh, a few minutes). Prints one JSON line per variant:
 *   {"variant":"node-200mb","bytes","peak_rss_mb","baseline_peak_rss_mb","growth_mb",...}
 * BENCH_UPLOAD_MB sets the size (default 200), BENCH_SETTLE_SECONDS the wait (default 10).
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { DEFAULT_ACCOUNT, startEmulator, type Emulator } from '../scripts/emulator';
import { basic, call } from '../scripts/emulator/client';
import { emulatorCredential, type CredentialImport } from '../scripts/n8n/credential';
import { installN8n, N8nFolder, packPackage } from '../scripts/n8n/instance';
import { nodeItems, parseExecuteOutput, type WorkflowRun } from '../scripts/n8n/run-data';
import type { WorkflowDefinition } from '../scripts/n8n/server';
import { actionNode, type ChainNode } from '../scripts/n8n/workflows';
import { writeCatalogue } from './catalogue';
import { startSampler, type Sampled } from './n8n-memory';

const MB = 1024 * 1024;
const LARGE_MB = Number(process.env.BENCH_UPLOAD_MB ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 1);
const TINY_BYTES = 1024;
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10);
// From 65 s on, the Wait node parks the execution in the database instead of waiting in-process.
if (!(SETTLE_SECONDS >= 0 && SETTLE_SECONDS < 65))
	throw new Error('BENCH_SETTLE_SECONDS must be from 0 to 64');

interface Measured {
	run: WorkflowRun;
	sampled: Sampled;
	/** VmHWM of the `n8n execute` process itself. */
	mainHwmKb: number;
	seconds: number;
}

async function measure(n8n: N8nFolder, workflowId: string): Promise<Measured> {
	const stop = startSampler(/ n8n execute /);
	const started = performance.now();
	let run: WorkflowRun;
	try {
		run = parseExecuteOutput(
			(await n8n.n8n(['execute', `--id=${workflowId}`, '--rawOutput'])).stdout,
		);
	} catch (error) {
		await stop();
		throw error;
	}
	const seconds = (performance.now() - started) / 1000;
	const sampled = await stop();
	const main = sampled.processes.find((entry) => entry.pid === sampled.mainPid);
	return { run, sampled, mainHwmKb: main?.hwmKb ?? 0, seconds };
}

const SETTLE_NODE = 'Settle';
const READ_NODE = 'Read File';
const UPLOAD_NODE = 'Upload';

function uploadWorkflow(name: string, file: string, upload: ChainNode): WorkflowDefinition {
	const chain = [
		{ name: 'Start', type: 'n8n-nodes-base.manualTrigger', typeVersion: 1, parameters: {} },
		{
			name: SETTLE_NODE,
			type: 'n8n-nodes-base.wait',
			typeVersion: 1.1,
			webhookId: '0b7f3c1e-5a2d-4e8f-9c6b-1d4a7e2f8b3c',
			parameters: { resume: 'timeInterval', amount: SETTLE_SECONDS, unit: 'seconds' },
		},
		{
			name: READ_NODE,
			type: 'n8n-nodes-base.readWriteFile',
			typeVersion: 1.1,
			parameters: { operation: 'read', fileSelector: file, options: {} },
		},
		upload,
	];
	const nodes = chain.map((node, index) => ({
		id: `7c1e4b2a-9d3f-4e5a-8b6c-${String(index).padStart(12, '0')}`,
		position: [index * 220, 0],
		...node,
	}));
	const connections: Record<string, unknown> = {};
	for (let index = 0; index < chain.length - 1; index++) {
		connections[chain[index].name] = {
			main: [[{ node: chain[index + 1].name, type: 'main', index: 0 }]],
		};
	}
	return { name, nodes, connections, settings: { executionOrder: 'v1' } };
}

function nodeUpload(): ChainNode {
	return actionNode(UPLOAD_NODE, {
		resource: 'document',
		operation: 'upload',
		source: 'binary',
		binaryPropertyName: 'data',
		options: { validate: true },
	});
}

function httpRequestUpload({ data: credential }: CredentialImport): ChainNode {
	return {
		name: UPLOAD_NODE,
		type: 'n8n-nodes-base.httpRequest',
		typeVersion: 4.2,
		parameters: {
			method: 'PUT',
			url: `${credential.baseUrl}/api/xml`,
			sendHeaders: true,
			specifyHeaders: 'keypair',
			headerParameters: {
				parameters: [
					{ name: 'Authorization', value: basic(credential.username, credential.password) },
					{ name: 'customerId', value: credential.customerId },
					{ name: 'customerIdType', value: credential.customerIdType },
				],
			},
			sendBody: true,
			contentType: 'binaryData',
			inputDataFieldName: 'data',
			options: {
				redirect: { redirect: { followRedirects: false } },
				response: { response: { responseFormat: 'text', outputPropertyName: 'sessionId' } },
			},
		},
	};
}

/** Where n8n put the file the Read node read: the mode part of its binary data ID. */
function binaryMode(run: WorkflowRun): string {
	const item = run.data.resultData.runData[READ_NODE]?.[0]?.data?.main?.[0]?.[0];
	const id = item?.binary?.data?.id;
	return id ? id.split(':')[0] : 'memory';
}

/** The size of the document the emulator received for a session, from its list of the day. */
async function receivedBytes(
	emulator: Emulator,
	run: WorkflowRun,
	sessionId: string,
): Promise<number | undefined> {
	const days = new Set(
		[run.startedAt, run.stoppedAt ?? new Date().toISOString()].map((at) => at.slice(0, 10)),
	);
	for (const day of days) {
		const answer = await call(emulator, 'GET', `/api/xml/${day}`);
		const records = answer.json<Array<{ id: string; fileLenght: number }>>();
		const record = records.find((entry) => entry.id.toLowerCase() === sessionId.toLowerCase());
		if (record) return record.fileLenght;
	}
	return undefined;
}

async function checkUpload(
	emulator: Emulator,
	measured: Measured,
	bytes: number,
	variant: string,
): Promise<void> {
	const [item] = nodeItems(measured.run, UPLOAD_NODE);
	if (!item) throw new Error(`${variant}: the upload node output no item`);
	const sessionId = String(item.sessionId ?? '').trim();
	if (variant === 'node' && (item.bytes !== bytes || item.validation !== 'passed')) {
		throw new Error(
			`${variant}: the node reported ${String(item.bytes)} bytes, validation ${String(item.validation)}`,
		);
	}
	const received = await receivedBytes(emulator, measured.run, sessionId);
	if (received !== bytes) {
		throw new Error(
			`${variant}: the service received ${String(received)} bytes instead of ${bytes} (session "${sessionId}")`,
		);
	}
}

const mb = (kb: number) => Math.round((kb / 1024) * 10) / 10;

async function main(): Promise<void> {
	if (Number(process.versions.node.split('.')[0]) < 24) {
		throw new Error(
			`n8n 2.x needs Node 24, this is Node ${process.versions.node}: run it with the toolchain of scripts/toolchain.sh`,
		);
	}
	const folder = realpathSync(mkdtempSync(join(tmpdir(), 'memory-n8n-')));
	let emulator: Emulator | undefined;
	try {
		const tarball = process.env.E2E_PACKAGE_TGZ ?? packPackage(join(folder, 'pack'));
		const n8n = await N8nFolder.create(await installN8n(), join(folder, 'n8n'), tarball);

		const files = join(folder, 'files');
		const tiny = join(files, 'tiny.xml');
		const large = join(files, 'catalogue.xml');
		mkdirSync(files);
		const sizes = {
			tiny: await writeCatalogue(tiny, TINY_BYTES),
			large: await writeCatalogue(large, LARGE_MB * MB),
		};
		// The only folder the n8n runs may read files from; every n8n command gets this process's
		// environment.
		process.env.N8N_RESTRICT_FILE_ACCESS_TO = files;

		emulator = await startEmulator({ processingMs: 0 });
		const credential = emulatorCredential(emulator.url, DEFAULT_ACCOUNT);
		await n8n.importCredentials([credential]);
		const variants = [
			{ variant: 'node', upload: nodeUpload() },
			{ variant: 'http-request', upload: httpRequestUpload(credential) },
		];
		const ids = (variant: string) => ({
			tinyId: `${variant}-tiny`.replace(/[^a-z]/g, ''),
			largeId: `${variant}-large`.replace(/[^a-z]/g, ''),
		});
		await n8n.importWorkflows(
			variants.flatMap(({ variant, upload }) => [
				{ ...uploadWorkflow(`${variant} tiny`, tiny, upload), id: ids(variant).tinyId },
				{ ...uploadWorkflow(`${variant} ${LARGE_MB} MB`, large, upload), id: ids(variant).largeId },
			]),
		);
		// The fastest run of each variant: the one least slowed by other work on the machine. Rounds
		// alternate the variants, so a busy minute does not fall on one of them only.
		const uploadSeconds: Record<string, number> = {};
		for (let round = 1; round <= ROUNDS; round++) {
			for (const { variant } of variants) {
				const { tinyId, largeId } = ids(variant);
				const baseline = await measure(n8n, tinyId);
				await checkUpload(emulator, baseline, sizes.tiny, variant);
				emulator.reset();
				const measured = await measure(n8n, largeId);
				await checkUpload(emulator, measured, sizes.large, variant);
				// Drops the received files.
				emulator.reset();
				// What the large file adds to the same workflow's run: n8n's start-up and the wait cancel out.
				const seconds = measured.seconds - baseline.seconds;
				uploadSeconds[variant] = Math.min(uploadSeconds[variant] ?? Infinity, seconds);

				process.stdout.write(
					`${JSON.stringify({
						variant: `${variant}-${LARGE_MB}mb`,
						round,
						bytes: sizes.large,
						peak_rss_mb: mb(measured.sampled.peakKb),
						baseline_peak_rss_mb: mb(baseline.sampled.peakKb),
						growth_mb: mb(measured.sampled.peakKb - baseline.sampled.peakKb),
						main_hwm_mb: mb(measured.mainHwmKb),
						baseline_main_hwm_mb: mb(baseline.mainHwmKb),
						hwm_growth_mb: mb(measured.mainHwmKb - baseline.mainHwmKb),
						max_processes: measured.sampled.maxProcesses,
						samples: measured.sampled.samples,
						seconds: Math.round(measured.seconds * 10) / 10,
						baseline_seconds: Math.round(baseline.seconds * 10) / 10,
						upload_seconds: Math.round(seconds * 10) / 10,
						binary_mode: binaryMode(measured.run),
					})}\n`,
				);
			}
		}
		process.stdout.write(
			`${JSON.stringify({
				comparison: `time-${LARGE_MB}mb`,
				node_upload_seconds: Math.round(uploadSeconds.node * 10) / 10,
				http_request_upload_seconds: Math.round(uploadSeconds['http-request'] * 10) / 10,
				time_ratio: Math.round((uploadSeconds.node / uploadSeconds['http-request']) * 100) / 100,
			})}\n`,
		);
	} finally {
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
