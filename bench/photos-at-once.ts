/**
 * Photos by URL from a host with latency: the same run with Photos At Once 1 (one photo after
 * another) and 8 (the default), against the emulator and a photo host in this process that answers
 * every photo after BENCH_DELAY_MS. Prints one JSON line per setting:
 *   {"delayMs","photosAtOnce","photos","seconds"}
 *   BENCH_PHOTOS (200)  BENCH_DELAY_MS (100)  BENCH_PHOTO_BYTES (20000)
 */
import { randomBytes } from 'node:crypto';

// '.node.js' because tsx would resolve '.node' to the codex file next to it (.node.json).
import { ProductDataIntegration } from '../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { startEmulator } from '../scripts/emulator';
import { emulatorCredentials, runNode } from '../scripts/n8n/in-process';
import { listenLocal } from '../test/helpers/server';

function setting(name: string, fallback: number): number {
	const raw = process.env[name];
	const value = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
	if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0`);
	return Math.floor(value);
}

const PHOTOS = setting('BENCH_PHOTOS', 200);
const DELAY_MS = setting('BENCH_DELAY_MS', 100);
const PHOTO_BYTES = Math.max(8, setting('BENCH_PHOTO_BYTES', 20_000));
// The emulator and the credential both fast: the bench measures the photo host's waiting.
const FAST_CREDENTIAL = { customRateLimit: true, bucketCapacity: 50, leakIntervalSeconds: 0.001 };

async function main(): Promise<void> {
	// The first bytes of a JPEG; each URL's own bytes at the end, so that no two photos are the same.
	const photo = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(PHOTO_BYTES - 4)]);
	const host = await listenLocal((req, res) => {
		setTimeout(() => {
			const body = Buffer.concat([photo, Buffer.from(req.url ?? '')]);
			res.writeHead(200, { 'content-type': 'image/jpeg' }).end(body);
		}, DELAY_MS);
	});
	const emulator = await startEmulator({ onlyImages: true, bucketCapacity: 50, leakIntervalMs: 1 });
	const node = new ProductDataIntegration();
	try {
		for (const photosAtOnce of [1, 8]) {
			const items = Array.from({ length: PHOTOS }, (_, n) => ({
				json: { url: `${host.url}/p/${photosAtOnce}-${n}.jpg` },
			}));
			const started = Date.now();
			const result = await runNode({
				node,
				parameters: {
					resource: 'image',
					operation: 'upload',
					imagesFrom: 'url',
					photoUrl: '={{ $json.url }}',
					options: { photosAtOnce, allowedInternalHosts: new URL(host.url).host },
				},
				items,
				credentials: emulatorCredentials(emulator, FAST_CREDENTIAL),
			});
			if (result.error) throw new Error(`The run failed: ${result.error.message}`);
			const seconds = (Date.now() - started) / 1000;
			console.log(JSON.stringify({ delayMs: DELAY_MS, photosAtOnce, photos: PHOTOS, seconds }));
		}
	} finally {
		await emulator.close();
		await host.close();
	}
}

void main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
