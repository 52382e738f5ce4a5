/**
 * Memory of sending an image upload's multipart body, full edition against verified edition: the
 * same images (BENCH_IMAGES files of BENCH_IMAGE_MB each, default 4 × 50 MB) on disk as n8n's
 * filesystem binary store keeps them, encoded by each edition's multipart module and sent to a
 * local server that drops what it receives. The full edition streams each file (n8n's
 * getBinaryStream); the verified edition reads each file whole (n8n's getBinaryDataBuffer) and
 * sends one Buffer. Each edition runs in a child process of its own, so that each has a clean
 * baseline. Prints one JSON line per edition, then one with the ratio of their peaks.
 */
import { execFileSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

import * as full from '../nodes/shared/fullEdition/streamedMultipart';
import type { FilePart, MultipartUpload } from '../nodes/shared/ports';
import * as verified from '../nodes/shared/ports/inMemoryMultipart';

const IMAGES = Number(process.env.BENCH_IMAGES ?? 4);
const IMAGE_BYTES = Number(process.env.BENCH_IMAGE_MB ?? 50) * 1024 * 1024;
const SAMPLE_MS = 5;

const mb = (value: number) => Math.round((value / (1024 * 1024)) * 10) / 10;

async function sink(): Promise<{ server: Server; port: number }> {
	const server = createServer((req, res) => {
		req.resume();
		req.once('end', () => res.end('ok'));
	});
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	return { server, port: (server.address() as { port: number }).port };
}

async function send(port: number, upload: MultipartUpload): Promise<void> {
	const body = await upload.body();
	const headers: Record<string, string> = {};
	for (const [name, value] of Object.entries(upload.headers)) headers[name] = String(value);
	const isForm = typeof (body as { getHeaders?: unknown }).getHeaders === 'function';
	if (isForm)
		Object.assign(
			headers,
			(body as unknown as { getHeaders: () => Record<string, string> }).getHeaders(),
		);
	const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers });
	const answered = once(req, 'response');
	if (Buffer.isBuffer(body)) req.end(body);
	else (body as Readable).pipe(req);
	const [response] = (await answered) as [Readable];
	response.resume();
	await once(response, 'end');
}

/** Child: encodes and sends the images with one edition's module, prints its peak memory growth. */
async function measure(edition: 'full' | 'verified', files: string[]): Promise<void> {
	const { server, port } = await sink();
	const parts: FilePart[] = files.map((file, n) => ({
		name: 'file',
		filename: `image-${n}.jpg`,
		contentType: 'image/jpeg',
		size: IMAGE_BYTES,
		read: async () => await readFile(file),
		open: async () => createReadStream(file),
	}));
	const encoder = edition === 'full' ? full : verified;
	// A small warm-up loads everything the measured run needs.
	await send(
		port,
		encoder.encodeMultipart([
			{ ...parts[0], size: 1, read: async () => Buffer.from('x'), open: undefined },
		]),
	);

	(globalThis as { gc?: () => void }).gc?.();
	const base = process.memoryUsage();
	let peakRss = base.rss;
	let peakBuffers = base.arrayBuffers;
	const sampler = setInterval(() => {
		const usage = process.memoryUsage();
		peakRss = Math.max(peakRss, usage.rss);
		peakBuffers = Math.max(peakBuffers, usage.arrayBuffers);
	}, SAMPLE_MS);
	const maxRssBefore = process.resourceUsage().maxRSS * 1024;
	const upload = encoder.encodeMultipart(parts);
	await send(port, upload);
	clearInterval(sampler);
	const maxRssAfter = process.resourceUsage().maxRSS * 1024;
	if (maxRssAfter > maxRssBefore) peakRss = Math.max(peakRss, maxRssAfter);
	const sent = upload.digests().reduce((sum, digest) => sum + (digest?.bytes ?? 0), 0);
	upload.close();
	server.close();
	if (sent !== IMAGES * IMAGE_BYTES)
		throw new Error(`${edition}: sent ${sent} bytes instead of ${IMAGES * IMAGE_BYTES}`);
	process.stdout.write(
		`${JSON.stringify({ edition, images: IMAGES, image_mb: mb(IMAGE_BYTES), body_mb: mb(IMAGES * IMAGE_BYTES), peak_rss_growth_mb: mb(peakRss - base.rss), peak_buffers_growth_mb: mb(peakBuffers - base.arrayBuffers) })}\n`,
	);
}

function main(): void {
	const folder = mkdtempSync(join(tmpdir(), 'memory-multipart-'));
	try {
		const files = Array.from({ length: IMAGES }, (_, n) => {
			const file = join(folder, `image-${n}.jpg`);
			writeFileSync(file, Buffer.alloc(IMAGE_BYTES, n + 1));
			return file;
		});
		const results = (['full', 'verified'] as const).map((edition) => {
			const line = execFileSync(
				process.execPath,
				[...process.execArgv, __filename, '--edition', edition, ...files],
				{
					encoding: 'utf8',
					stdio: ['ignore', 'pipe', 'inherit'],
				},
			);
			process.stdout.write(line);
			return JSON.parse(line.trim().split('\n').pop() as string) as { peak_rss_growth_mb: number };
		});
		const [fullRun, verifiedRun] = results;
		process.stdout.write(
			`${JSON.stringify({ verified_over_full_peak_rss: Math.round((verifiedRun.peak_rss_growth_mb / Math.max(fullRun.peak_rss_growth_mb, 0.1)) * 10) / 10 })}\n`,
		);
	} finally {
		rmSync(folder, { recursive: true, force: true });
	}
}

const editionFlag = process.argv.indexOf('--edition');
if (editionFlag >= 0) {
	const edition = process.argv[editionFlag + 1] as 'full' | 'verified';
	measure(edition, process.argv.slice(editionFlag + 2)).then(
		() => process.exit(0),
		(error: unknown) => {
			process.stderr.write(
				`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
			);
			process.exit(1);
		},
	);
} else {
	main();
}
