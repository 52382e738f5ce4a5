/**
 * Photos by URL from a host with latency: the same run with each Photos At Once of BENCH_AT_ONCE,
 * against the emulator and a photo host in this process that answers every photo after
 * BENCH_DELAY_MS. Prints one JSON line per setting:
 *   {"delayMs","photosAtOnce","photos","seconds","sequentialSeconds","hostBusySeconds",
 *    "waitingRatio","peakInFlight","meanInFlight"}
 * waitingRatio is the host's busy time (at least one photo request in flight) over photos × delay,
 * the waiting of one photo after another: as bench:sync-n8n reckons it.
 *   BENCH_AT_ONCE (1 and the default, e.g. 1,8,10,12)  BENCH_PHOTOS (200)  BENCH_DELAY_MS (100)
 *   BENCH_PHOTO_BYTES (20000)
 */
import { randomBytes } from 'node:crypto';

// '.node.js' because tsx would resolve '.node' to the codex file next to it (.node.json).
import { ProductDataIntegration } from '../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { DEFAULT_PHOTOS_AT_ONCE } from '../nodes/ProductDataIntegration/actions/image/uploadSettings';
import { startEmulator } from '../scripts/emulator';
import { emulatorCredentials, runNode } from '../scripts/n8n/in-process';
import { listenLocal } from '../test/helpers/server';

function setting(name: string, fallback: number): number {
	const raw = process.env[name];
	const value = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
	if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0`);
	return Math.floor(value);
}

function atOnceSettings(): number[] {
	const raw = process.env.BENCH_AT_ONCE ?? '';
	if (raw.trim() === '') return [1, DEFAULT_PHOTOS_AT_ONCE];
	const values = raw.split(',').map((part) => Number(part.trim()));
	if (!values.every((value) => Number.isInteger(value) && value >= 1))
		throw new Error('BENCH_AT_ONCE must be whole numbers >= 1, separated by commas');
	return values;
}

const AT_ONCE = atOnceSettings();
const PHOTOS = setting('BENCH_PHOTOS', 200);
const DELAY_MS = setting('BENCH_DELAY_MS', 100);
const PHOTO_BYTES = Math.max(8, setting('BENCH_PHOTO_BYTES', 20_000));
// The emulator and the credential both fast: the bench measures the photo host's waiting.
const FAST_CREDENTIAL = { customRateLimit: true, bucketCapacity: 50, leakIntervalSeconds: 0.001 };

/** The photo host's time: busy while at least one request is in flight, and each request's own. */
const host = { inFlight: 0, peakInFlight: 0, busySince: 0, busyMs: 0, requestMs: 0 };

function round(value: number, places: number): number {
	return Math.round(value * 10 ** places) / 10 ** places;
}

async function main(): Promise<void> {
	// The first bytes of a JPEG; each URL's own bytes at the end, so that no two photos are the same.
	const photo = Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(PHOTO_BYTES - 4)]);
	const photoHost = await listenLocal((req, res) => {
		const arrived = performance.now();
		if (host.inFlight === 0) host.busySince = arrived;
		host.inFlight++;
		host.peakInFlight = Math.max(host.peakInFlight, host.inFlight);
		res.once('close', () => {
			const ended = performance.now();
			host.inFlight--;
			host.requestMs += ended - arrived;
			if (host.inFlight === 0) host.busyMs += ended - host.busySince;
		});
		setTimeout(() => {
			const body = Buffer.concat([photo, Buffer.from(req.url ?? '')]);
			res.writeHead(200, { 'content-type': 'image/jpeg' }).end(body);
		}, DELAY_MS);
	});
	const emulator = await startEmulator({ onlyImages: true, bucketCapacity: 50, leakIntervalMs: 1 });
	const node = new ProductDataIntegration();
	try {
		for (const photosAtOnce of AT_ONCE) {
			Object.assign(host, { peakInFlight: 0, busyMs: 0, requestMs: 0 });
			const items = Array.from({ length: PHOTOS }, (_, n) => ({
				json: { url: `${photoHost.url}/p/${photosAtOnce}-${n}.jpg` },
			}));
			const started = Date.now();
			const result = await runNode({
				node,
				parameters: {
					resource: 'image',
					operation: 'upload',
					imagesFrom: 'url',
					photoUrl: '={{ $json.url }}',
					options: { photosAtOnce, allowedInternalHosts: new URL(photoHost.url).host },
				},
				items,
				credentials: emulatorCredentials(emulator, FAST_CREDENTIAL),
			});
			if (result.error) throw new Error(`The run failed: ${result.error.message}`);
			const seconds = (Date.now() - started) / 1000;
			const sequentialSeconds = (PHOTOS * DELAY_MS) / 1000;
			console.log(
				JSON.stringify({
					delayMs: DELAY_MS,
					photosAtOnce,
					photos: PHOTOS,
					seconds,
					sequentialSeconds,
					hostBusySeconds: round(host.busyMs / 1000, 2),
					waitingRatio:
						sequentialSeconds > 0 ? round(host.busyMs / 1000 / sequentialSeconds, 3) : 0,
					peakInFlight: host.peakInFlight,
					meanInFlight: host.busyMs > 0 ? round(host.requestMs / host.busyMs, 1) : 0,
				}),
			);
		}
	} finally {
		await emulator.close();
		await photoHost.close();
	}
}

void main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
