/**
 * Memory of uploading a large XML document through the node: a 200 MB file in n8n's filesystem
 * binary store, checked for well-formedness and hashed (one streaming pass), then uploaded as a
 * stream. The emulator runs in a child process so that its own copy of the body is not counted.
 * Prints one JSON line: {"bytes", "peak_rss_growth_mb", ...}. Run with `tsx --expose-gc` for a
 * steadier baseline. BENCH_UPLOAD_MB sets the size (default 200); BENCH_VALIDATE=0 turns the
 * well-formedness check off, to tell its share from the upload's.
 * BENCH_KIND=images uploads the same amount as BENCH_IMAGES images (default 50), one per item, all
 * in one request (Image Upload with its limits raised), to show that a request's size does not
 * become memory.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { prepareBinaryData } from 'n8n-core';

// The explicit .js keeps tsx from resolving the node's codex file (ProductDataIntegration.node.json).
import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { startEmulator } from '../scripts/emulator';
import { emulatorCredentials, runNode, setBinaryDataMode } from '../scripts/n8n/in-process';
import { writeCatalogue } from './catalogue';

const TARGET_BYTES = Number(process.env.BENCH_UPLOAD_MB ?? 200) * 1024 * 1024;
const SAMPLE_MS = 10;
const IMAGES =
	process.env.BENCH_KIND === 'images' ? Math.max(1, Number(process.env.BENCH_IMAGES ?? 50)) : 0;

interface Upload {
	parameters: INodeParameters;
	items: INodeExecutionData[];
	bytes: number;
}

/** The catalogue document in n8n's filesystem store, uploaded from its binary field. */
async function documentUpload(folder: string): Promise<Upload> {
	const file = join(folder, 'catalogue.xml');
	const bytes = await writeCatalogue(file, TARGET_BYTES);
	const binary = await prepareBinaryData(
		createReadStream(file),
		'bench-execution',
		'harness-workflow',
		'catalogue.xml',
		'application/xml',
	);
	if (!binary.id) throw new Error('The binary data was not stored in the filesystem store');
	return {
		parameters: {
			resource: 'document',
			operation: 'upload',
			source: 'binary',
			binaryPropertyName: 'data',
			options: { validate: process.env.BENCH_VALIDATE !== '0' },
		},
		items: [{ json: {}, binary: { data: binary } }],
		bytes,
	};
}

/** IMAGES images of random bytes in n8n's filesystem store, one per item, limits raised so they go in one request. */
async function imagesUpload(folder: string): Promise<Upload> {
	const size = Math.floor(TARGET_BYTES / IMAGES);
	const items: INodeExecutionData[] = [];
	for (let index = 0; index < IMAGES; index++) {
		const file = join(folder, `photo-${index}.jpg`);
		writeFileSync(file, randomBytes(size));
		const binary = await prepareBinaryData(
			createReadStream(file),
			'bench-execution',
			'harness-workflow',
			`photo-${index}.jpg`,
			'image/jpeg',
		);
		if (!binary.id) throw new Error('The binary data was not stored in the filesystem store');
		items.push({ json: {}, binary: { data: binary } });
	}
	const options = {
		imagesPerRequest: IMAGES,
		maxRequestMegabytes: 100_000,
		rememberKnownImages: false,
	};
	return {
		parameters: {
			resource: 'image',
			operation: 'upload',
			imagesFrom: 'named',
			binaryProperties: 'data',
			options,
		},
		items,
		bytes: size * IMAGES,
	};
}

/** Child: the emulator, announcing its URL on stdout and stopping when stdin closes. */
async function emulatorProcess(): Promise<void> {
	const emulator = await startEmulator({ processingMs: 0 });
	process.stdout.write(`${JSON.stringify({ url: emulator.url })}\n`);
	process.stdin.resume();
	await once(process.stdin, 'end');
	await emulator.close();
}

async function startEmulatorProcess(): Promise<{ url: string; stop: () => Promise<void> }> {
	const child = spawn(process.execPath, [...process.execArgv, __filename, '--emulator'], {
		stdio: ['pipe', 'pipe', 'inherit'],
	});
	let url = '';
	// Node flags such as --trace-gc print to stdout too: the URL is on the line of its own shape.
	for await (const line of createInterface({ input: child.stdout })) {
		if (line.startsWith('{"url":')) {
			url = (JSON.parse(line) as { url: string }).url;
			break;
		}
	}
	if (url === '') throw new Error('The emulator process ended without announcing its URL');
	child.stdout.resume();
	return {
		url,
		stop: async () => {
			child.stdin.end();
			if (child.exitCode === null) await once(child, 'exit');
		},
	};
}

function collectGarbage(): void {
	(globalThis as { gc?: () => void }).gc?.();
}

async function main(): Promise<void> {
	const folder = mkdtempSync(join(tmpdir(), 'memory-upload-'));
	const emulator = await startEmulatorProcess();
	try {
		await setBinaryDataMode('filesystem');
		const upload = IMAGES > 0 ? await imagesUpload(folder) : await documentUpload(folder);

		const node = new ProductDataIntegration();
		const credentials = emulatorCredentials({ url: emulator.url });
		// A small warm-up run loads every module the measured run needs.
		await runNode({
			node,
			parameters: { resource: 'document', operation: 'upload', source: 'text', xml: '<Products/>' },
			credentials,
		});

		collectGarbage();
		await new Promise((resolve) => setTimeout(resolve, 200));
		collectGarbage();
		const baseUsage = process.memoryUsage();
		const baseline = baseUsage.rss;
		const maxRssBefore = process.resourceUsage().maxRSS * 1024;
		let peak = baseline;
		let peakHeap = 0;
		let peakExternal = 0;
		const sampler = setInterval(() => {
			const usage = process.memoryUsage();
			peak = Math.max(peak, usage.rss);
			peakHeap = Math.max(peakHeap, usage.heapTotal - baseUsage.heapTotal);
			peakExternal = Math.max(peakExternal, usage.external - baseUsage.external);
		}, SAMPLE_MS);

		const started = performance.now();
		const { output, error } = await runNode({
			node,
			parameters: upload.parameters,
			items: upload.items,
			credentials,
		});
		const seconds = (performance.now() - started) / 1000;
		clearInterval(sampler);
		peak = Math.max(peak, process.memoryUsage.rss());
		// The kernel's high-water mark also catches a spike between two samples.
		const maxRssAfter = process.resourceUsage().maxRSS * 1024;
		if (maxRssAfter > maxRssBefore) peak = Math.max(peak, maxRssAfter);

		if (error) throw new Error(`The upload failed: ${error.message}`);
		const uploaded = output[0].reduce((sum, { json }) => sum + Number(json.bytes), 0);
		if (uploaded !== upload.bytes)
			throw new Error(`Uploaded ${uploaded} bytes instead of ${upload.bytes}`);

		const mb = (value: number) => Math.round((value / (1024 * 1024)) * 10) / 10;
		process.stdout.write(
			`${JSON.stringify({
				bytes: upload.bytes,
				...(IMAGES > 0 ? { images: IMAGES } : { validation: output[0][0].json.validation }),
				peak_rss_growth_mb: mb(peak - baseline),
				baseline_rss_mb: mb(baseline),
				seconds: Math.round(seconds * 10) / 10,
				binary_mode: 'filesystem',
				peak_heap_total_growth_mb: mb(peakHeap),
				peak_external_growth_mb: mb(peakExternal),
			})}\n`,
		);
	} finally {
		await emulator.stop();
		rmSync(folder, { recursive: true, force: true });
	}
}

const run = process.argv.includes('--emulator') ? emulatorProcess : main;
run().then(
	() => process.exit(0),
	(error: unknown) => {
		process.stderr.write(
			`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
		);
		process.exit(1);
	},
);
