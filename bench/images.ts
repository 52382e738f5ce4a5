/**
 * A catalogue's images synced twice: the first sync, then a nightly re-sync with 1 % of the images
 * changed, with Image Upload as it is now (batched, known images) and as it was before (one request
 * per item: Images Per Request = the images of one item, no known images; the re-sync with Skip
 * Existing, one lookup per image). Runs n8n-core's engine in this process against the emulator.
 * Prints one JSON line per way and run:
 *   {"way","run","items","images","changedImages","batchSize","requests","imageRequests","bucketSeconds"}
 * where bucketSeconds is the time those requests take at the service's real pace (50 at once, then
 * one every 5 s). The bench itself runs with a 1 ms bucket on both sides, so it takes seconds;
 * batched runs add the target ("target", "withinTarget": first sync images / B + 5 requests,
 * re-sync changed images / B + 5).
 *   BENCH_ITEMS (10000)  BENCH_IMAGES_PER_ITEM (2)  BENCH_CHANGED_PERCENT (1)  BENCH_IMAGE_BYTES (512)  BENCH_SEED (1)
 */
import { createHash } from 'node:crypto';

import type { IBinaryKeyData, INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { DEFAULT_IMAGES_PER_REQUEST } from '../nodes/ProductDataIntegration/actions/image/uploadSettings';
// '.node.js' because tsx would resolve '.node' to the codex file next to it (.node.json).
import { ProductDataIntegration } from '../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { startEmulator, type Emulator } from '../scripts/emulator';
import { binaryItem, emulatorCredentials, runNode } from '../scripts/n8n/in-process';

function setting(name: string, fallback: number): number {
	const raw = process.env[name];
	const value = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
	if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0`);
	return value;
}

const ITEMS = Math.floor(setting('BENCH_ITEMS', 10_000));
const IMAGES_PER_ITEM = Math.max(1, Math.floor(setting('BENCH_IMAGES_PER_ITEM', 2)));
const CHANGED_PERCENT = setting('BENCH_CHANGED_PERCENT', 1);
const IMAGE_BYTES = Math.max(1, Math.floor(setting('BENCH_IMAGE_BYTES', 512)));
const SEED = Math.floor(setting('BENCH_SEED', 1));

/** The service's real terms, for the time the requests take there. */
const REAL_CAPACITY = 50;
const REAL_INTERVAL_SECONDS = 5;
// Both buckets fast, so the bench measures requests, not waiting.
const FAST_BUCKET = { bucketCapacity: REAL_CAPACITY, leakIntervalMs: 1 };
const FAST_CREDENTIAL = {
	customRateLimit: true,
	bucketCapacity: REAL_CAPACITY,
	leakIntervalSeconds: 0.001,
};

const node = new ProductDataIntegration();

/** Bytes that depend on the seed and `name` only: the same run gives the same catalogue and changes. */
function seeded(name: string, length: number): Buffer {
	const blocks: Buffer[] = [];
	for (let block = 0; block * 32 < length; block++)
		blocks.push(createHash('sha256').update(`${SEED}:${name}:${block}`).digest());
	return Buffer.concat(blocks).subarray(0, length);
}

/** images[item][field]: the catalogue's photos, all different. */
function catalogue(): Buffer[][] {
	return Array.from({ length: ITEMS }, (_, item) =>
		Array.from({ length: IMAGES_PER_ITEM }, (_, field) =>
			seeded(`image:${item}:${field}`, IMAGE_BYTES),
		),
	);
}

/** The catalogue with some photos replaced by new ones, at positions picked by the seed. */
function changeSome(images: Buffer[][]): { changed: Buffer[][]; count: number } {
	const total = ITEMS * IMAGES_PER_ITEM;
	const count = Math.round((total * CHANGED_PERCENT) / 100);
	const changed = images.map((fields) => [...fields]);
	const picked = new Set<number>();
	for (let n = 0; picked.size < count; n++)
		picked.add(seeded(`change:${n}`, 4).readUInt32BE() % total);
	for (const position of picked) {
		changed[Math.floor(position / IMAGES_PER_ITEM)][position % IMAGES_PER_ITEM] = seeded(
			`changed:${position}`,
			IMAGE_BYTES,
		);
	}
	return { changed, count };
}

const FIELDS = Array.from({ length: IMAGES_PER_ITEM }, (_, n) => `image${n + 1}`);

async function asItems(images: Buffer[][]): Promise<INodeExecutionData[]> {
	const items: INodeExecutionData[] = [];
	for (const [index, fields] of images.entries()) {
		const binary: IBinaryKeyData = {};
		for (const [n, data] of fields.entries()) {
			binary[FIELDS[n]] = (
				await binaryItem(data, `product-${index}-${n + 1}.jpg`, 'image/jpeg')
			).binary!.data;
		}
		items.push({ json: { sku: `SKU-${index}` }, binary });
	}
	return items;
}

function requestCounts(emulator: Emulator): { requests: number; imageRequests: number } {
	const { requests } = emulator.stats();
	const all = Object.values(requests).reduce((sum, n) => sum + n, 0);
	const images = Object.entries(requests).reduce(
		(sum, [route, n]) => (route.endsWith(' /api/images') ? sum + n : sum),
		0,
	);
	return { requests: all, imageRequests: images };
}

interface Way {
	name: 'batched' | 'today';
	batchSize: number;
	first: INodeParameters;
	resync: INodeParameters;
}

/** The requests one sync sent (the emulator keeps its images, and its counts, from run to run). */
async function sync(emulator: Emulator, options: INodeParameters, items: INodeExecutionData[]) {
	const before = requestCounts(emulator);
	const result = await runNode({
		node,
		parameters: {
			resource: 'image',
			operation: 'upload',
			imagesFrom: 'named',
			binaryProperties: FIELDS.join(','),
			options,
		},
		items,
		credentials: emulatorCredentials(emulator, FAST_CREDENTIAL),
	});
	if (result.error) throw new Error(`The sync failed: ${result.error.message}`);
	const after = requestCounts(emulator);
	return {
		requests: after.requests - before.requests,
		imageRequests: after.imageRequests - before.imageRequests,
	};
}

async function main(): Promise<void> {
	const images = catalogue();
	const { changed, count } = changeSome(images);
	const firstItems = await asItems(images);
	const resyncItems = await asItems(changed);
	const ways: Way[] = [
		{
			name: 'batched',
			batchSize: DEFAULT_IMAGES_PER_REQUEST,
			first: {},
			resync: {},
		},
		{
			name: 'today',
			batchSize: IMAGES_PER_ITEM,
			first: { imagesPerRequest: IMAGES_PER_ITEM, rememberKnownImages: false },
			resync: { imagesPerRequest: IMAGES_PER_ITEM, rememberKnownImages: false, skipExisting: true },
		},
	];
	for (const way of ways) {
		// An emulator (a base URL: an account) of its own per way, so no way sees another's known images.
		const emulator = await startEmulator(FAST_BUCKET);
		try {
			for (const run of ['first', 'resync'] as const) {
				const counts = await sync(emulator, way[run], run === 'first' ? firstItems : resyncItems);
				const line: Record<string, unknown> = {
					way: way.name,
					run,
					items: ITEMS,
					images: ITEMS * IMAGES_PER_ITEM,
					changedImages: run === 'first' ? 0 : count,
					batchSize: way.batchSize,
					...counts,
					bucketSeconds: Math.max(0, counts.requests - REAL_CAPACITY) * REAL_INTERVAL_SECONDS,
				};
				if (way.name === 'batched') {
					const sent = run === 'first' ? ITEMS * IMAGES_PER_ITEM : count;
					line.target = Math.floor(sent / way.batchSize) + 5;
					line.withinTarget = counts.requests <= (line.target as number);
				}
				console.log(JSON.stringify(line));
			}
		} finally {
			await emulator.close();
		}
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
