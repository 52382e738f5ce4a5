/**
 * A catalogue's photos synced night after night by URL, the workflow keeping its own memory of
 * them (what a Data Table keeps: per URL the version, md5 and hashcode of the last output), against
 * the emulator and a photo host in this process:
 *   first     every photo is new
 *   changed   1 % of the photos changed (new bytes, new version), the process remembers the rest
 *   restart   1 % more changed, and the process forgot its known images (a restart without Redis)
 *   verified  1 % more changed, run by the verified edition (n8n Cloud: no Redis, bodies in memory)
 * Of the photos, BENCH_SHARED_PERCENT are shared by two products (a variant's photo, a logo).
 * Prints one JSON line per night and way:
 *   {"part":"images","way","scenario","images","distinctImages","changedImages","imageRequests",
 *    "imagesSent","downloads","batchSize","target","withinTarget","measured"}
 * way "incremental" is measured: Image Upload by Photo URL with Known MD5 / Hashcode / Version.
 * way "today" is reckoned from what the workflow did before (HTTP Request downloads every photo
 * every night, Image Upload recognises known images by their content, in the process only, and
 * sends a photo shared by two products twice): "measured": false.
 * The targets: first night image requests <= distinct images / B + 5; every other night <=
 * changed images / B + 5, and downloads <= the changed photos.
 *   BENCH_PHOTOS (20000; the scale is 200000)  BENCH_SHARED_PERCENT (10)
 *   BENCH_CHANGED_PERCENT (1)  BENCH_PHOTO_BYTES (256)  BENCH_SEED (1)
 * The verified edition is loaded from verified/ (npm run build:verified, which the npm script runs).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { ICredentialType, INodeExecutionData, INodeParameters, INodeType } from 'n8n-workflow';

import { DEFAULT_IMAGES_PER_REQUEST } from '../nodes/ProductDataIntegration/actions/image/uploadSettings';
// '.node.js' because tsx would resolve '.node' to the codex file next to it (.node.json).
import { ProductDataIntegration } from '../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { startEmulator, type Emulator } from '../scripts/emulator';
import { emulatorCredentials, registerCredentialType, runNode } from '../scripts/n8n/in-process';
import { listenLocal } from '../test/helpers/server';

function setting(name: string, fallback: number): number {
	const raw = process.env[name];
	const value = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
	if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number >= 0`);
	return value;
}

const PHOTOS = Math.floor(setting('BENCH_PHOTOS', 20_000));
const SHARED_PERCENT = setting('BENCH_SHARED_PERCENT', 10);
const CHANGED_PERCENT = setting('BENCH_CHANGED_PERCENT', 1);
const PHOTO_BYTES = Math.max(8, Math.floor(setting('BENCH_PHOTO_BYTES', 256)));
const SEED = Math.floor(setting('BENCH_SEED', 1));
const B = DEFAULT_IMAGES_PER_REQUEST;

const ROOT = join(__dirname, '..');
// The emulator and the credential both fast: the bench counts requests, not waiting.
const FAST_BUCKET = { bucketCapacity: 50, leakIntervalMs: 1 };
const FAST_CREDENTIAL = { customRateLimit: true, bucketCapacity: 50, leakIntervalSeconds: 0.001 };

function seeded(name: string, length: number): Buffer {
	const blocks: Buffer[] = [];
	for (let block = 0; block * 32 < length; block++)
		blocks.push(createHash('sha256').update(`${SEED}:${name}:${block}`).digest());
	// The first bytes of a JPEG: the service takes only images.
	return Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), ...blocks]).subarray(0, length);
}

/** The photo each product shows: the first SHARED_PERCENT of them show a photo another one shows too. */
function photoOfProduct(product: number): string {
	const sharedProducts = 2 * Math.floor((PHOTOS * SHARED_PERCENT) / 200);
	const sharedPhotos = sharedProducts / 2;
	return product < sharedProducts ? `s${product % sharedPhotos}` : `p${product}`;
}

/** The photo host: each photo with a version and its bytes; counts what it sends. */
interface Photo {
	version: number;
	data: Buffer;
}
const host = new Map<string, Photo>();
let downloads = 0;

function changeSome(night: string): number {
	const ids = [...host.keys()];
	const count = Math.round((ids.length * CHANGED_PERCENT) / 100);
	const picked = new Set<string>();
	for (let n = 0; picked.size < count; n++)
		picked.add(ids[seeded(`${night}:${n}`, 8).readUInt32BE(4) % ids.length]);
	for (const id of picked) {
		const photo = host.get(id) as Photo;
		host.set(id, {
			version: photo.version + 1,
			data: seeded(`${id}:${photo.version + 1}`, PHOTO_BYTES),
		});
	}
	return count;
}

/** What the workflow keeps per photo URL (a Data Table's rows). */
const memory = new Map<string, { knownMd5: string; knownHashcode: string; knownVersion: string }>();

function products(hostUrl: string): INodeExecutionData[] {
	return Array.from({ length: PHOTOS }, (_, product) => {
		const id = photoOfProduct(product);
		const url = `${hostUrl}/photo/${id}.jpg`;
		const updatedAt = `v${(host.get(id) as Photo).version}`;
		return { json: { sku: `SKU-${product}`, url, updatedAt, ...(memory.get(url) ?? {}) } };
	});
}

const UPLOAD: INodeParameters = {
	resource: 'image',
	operation: 'upload',
	imagesFrom: 'url',
	photoUrl: '={{ $json.url }}',
	photoVersion: '={{ $json.updatedAt }}',
	options: {
		knownMd5: '={{ $json.knownMd5 ?? "" }}',
		knownHashcode: '={{ $json.knownHashcode ?? "" }}',
		knownVersion: '={{ $json.knownVersion ?? "" }}',
	},
};

function imageRequests(emulator: Emulator): number {
	return Object.entries(emulator.stats().requests).reduce(
		(sum, [route, n]) => (route.endsWith(' /api/images') ? sum + n : sum),
		0,
	);
}

async function night(
	node: INodeType,
	emulator: Emulator,
	hostUrl: string,
): Promise<{ imageRequests: number; imagesSent: number; downloads: number }> {
	const before = { requests: imageRequests(emulator), sent: emulator.stats().images, downloads };
	const items = products(hostUrl);
	const result = await runNode({
		node,
		// The photo host is on this machine: Allowed Internal Hosts names it.
		parameters: {
			...UPLOAD,
			options: { ...(UPLOAD.options as object), allowedInternalHosts: new URL(hostUrl).host },
		},
		items,
		credentials: emulatorCredentials(emulator, FAST_CREDENTIAL),
	});
	if (result.error) throw new Error(`The night failed: ${result.error.message}`);
	for (const { json, pairedItem } of result.output[0]) {
		const { url } = items[(pairedItem as { item: number }).item].json as { url: string };
		memory.set(url, {
			knownMd5: json.md5 as string,
			knownHashcode: json.hashcode as string,
			knownVersion: json.version as string,
		});
	}
	return {
		imageRequests: imageRequests(emulator) - before.requests,
		imagesSent: emulator.stats().images - before.sent,
		downloads: downloads - before.downloads,
	};
}

async function verifiedEdition(): Promise<INodeType> {
	const nodeFile = join(
		ROOT,
		'verified/nodes/ProductDataIntegration/ProductDataIntegration.node.ts',
	);
	const credentialFile = join(
		ROOT,
		'verified/credentials/ProductDataIntegrationApi.credentials.ts',
	);
	if (!existsSync(nodeFile))
		throw new Error('Build the verified edition first: npm run build:verified');
	const { ProductDataIntegration: VerifiedNode } = (await import(nodeFile)) as {
		ProductDataIntegration: new () => INodeType;
	};
	const { ProductDataIntegrationApi: VerifiedCredential } = (await import(credentialFile)) as {
		ProductDataIntegrationApi: new () => ICredentialType;
	};
	registerCredentialType(new VerifiedCredential());
	return new VerifiedNode();
}

async function main(): Promise<void> {
	for (let product = 0; product < PHOTOS; product++) {
		const id = photoOfProduct(product);
		if (!host.has(id)) host.set(id, { version: 1, data: seeded(`${id}:1`, PHOTO_BYTES) });
	}
	const distinctImages = host.size;
	const photoHost = await listenLocal((req, res) => {
		const id = /^\/photo\/([^/]+)\.jpg$/.exec(req.url ?? '')?.[1];
		const photo = id === undefined ? undefined : host.get(id);
		if (!photo) {
			res.writeHead(404).end();
			return;
		}
		downloads++;
		res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photo.data);
	});
	const emulator = await startEmulator({ ...FAST_BUCKET, onlyImages: true });
	const full = new ProductDataIntegration();
	const verified = await verifiedEdition();
	const forget = async () =>
		await runNode({
			node: full,
			parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
			credentials: emulatorCredentials(emulator, FAST_CREDENTIAL),
		});
	try {
		await forget();
		const scenarios = ['first', 'changed', 'restart', 'verified'] as const;
		for (const scenario of scenarios) {
			const changedImages = scenario === 'first' ? 0 : changeSome(scenario);
			if (scenario === 'restart') await forget();
			const counts = await night(
				scenario === 'verified' ? verified : full,
				emulator,
				photoHost.url,
			);
			const target = Math.floor((scenario === 'first' ? distinctImages : changedImages) / B) + 5;
			const common = {
				part: 'images',
				scenario,
				images: PHOTOS,
				distinctImages,
				changedImages,
				batchSize: B,
			};
			console.log(
				JSON.stringify({
					...common,
					way: 'incremental',
					...counts,
					target,
					withinTarget:
						counts.imageRequests <= target &&
						(scenario === 'first' || counts.downloads <= changedImages),
					measured: true,
				}),
			);
			// Before: every product's photo downloaded every night, each product's sent (a shared photo
			// twice), known images by content in the process only, gone at a restart or redeploy.
			const changedProducts = Math.round((changedImages * PHOTOS) / distinctImages);
			const sentToday = scenario === 'changed' ? changedProducts : PHOTOS;
			console.log(
				JSON.stringify({
					...common,
					way: 'today',
					imageRequests: Math.ceil(sentToday / B),
					imagesSent: sentToday,
					downloads: PHOTOS,
					measured: false,
				}),
			);
		}
	} finally {
		await emulator.close();
		await photoHost.close();
	}
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
