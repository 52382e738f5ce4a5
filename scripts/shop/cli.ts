/**
 * `npm run shop`: the fixture shop (./index.ts) on 127.0.0.1:8472, where examples/nightly-sync.json
 * reads its products: the shop alone, e.g. beside an n8n of your own (`npm start` runs one itself,
 * through this script). Ctrl+C or SIGTERM stops it, and it stops by itself when the process that
 * started it goes away.
 *
 * SHOP_PORT (8472; 0: a free port), SHOP_PRODUCTS (20), SHOP_PAGE_SIZE (500, products a page of the
 * product API, at most 1000), SHOP_PHOTO_BYTES (20000); SHOP_READY_FILE:
 * once it listens, a JSON file `{url, productsUrl}` is written there (whole, never half), for scripts.
 * A shop across a real network: SHOP_PHOTO_LATENCY_MS and SHOP_API_LATENCY_MS (0), the milliseconds
 * the photo host and the product API wait before each answer; SHOP_PHOTO_VERSIONS=0, photos listed
 * without their version (the host's ETag is then all a client has). The same as flags, which win:
 * `npm run shop -- --photo-latency-ms 100 --api-latency-ms 100 --no-photo-versions`.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { EXAMPLE_SHOP_PORT, startShop } from './index';

const PARENT_CHECK_MS = 1000;

function integer(name: string, fallback: number, minimum: number, raw = process.env[name]): number {
	if (raw === undefined || raw === '') return fallback;
	const value = Number(raw);
	if (!Number.isInteger(value) || value < minimum)
		throw new Error(`${name} must be an integer >= ${minimum}, got "${raw}"`);
	return value;
}

async function main(): Promise<void> {
	const { values: flags } = parseArgs({
		options: {
			'photo-latency-ms': { type: 'string' },
			'api-latency-ms': { type: 'string' },
			'no-photo-versions': { type: 'boolean' },
		},
	});
	const latency = (flag: 'photo-latency-ms' | 'api-latency-ms', variable: string) =>
		flags[flag] !== undefined ? integer(`--${flag}`, 0, 0, flags[flag]) : integer(variable, 0, 0);
	const shop = await startShop({
		port: integer('SHOP_PORT', EXAMPLE_SHOP_PORT, 0),
		products: integer('SHOP_PRODUCTS', 20, 1),
		pageSize: integer('SHOP_PAGE_SIZE', 500, 1),
		photoBytes: integer('SHOP_PHOTO_BYTES', 20_000, 1),
		photoLatencyMs: latency('photo-latency-ms', 'SHOP_PHOTO_LATENCY_MS'),
		apiLatencyMs: latency('api-latency-ms', 'SHOP_API_LATENCY_MS'),
		photoVersions: flags['no-photo-versions'] !== true && process.env.SHOP_PHOTO_VERSIONS !== '0',
	});
	const parent = process.ppid;
	let stopping = false;
	const stop = (why: string) => {
		if (stopping) return;
		stopping = true;
		process.stdout.write(`\n${why}, stopping the shop.\n`);
		shop.close().then(
			() => process.exit(0),
			() => process.exit(1),
		);
	};
	process.on('SIGINT', () => stop('SIGINT received'));
	process.on('SIGTERM', () => stop('SIGTERM received'));
	setInterval(() => {
		if (process.ppid !== parent) stop('The process that started the shop is gone');
	}, PARENT_CHECK_MS);
	process.stdout.write(
		[
			'Fixture shop',
			`  products:  ${shop.productsUrl} (${shop.options.products} products, ${shop.options.pageSize} a page)`,
			`  photos:    ${shop.url}/photos/ (${shop.options.photosPerProduct} a product, ${shop.options.photoBytes} bytes each)`,
			`  latency:   photos ${shop.options.photoLatencyMs} ms, products ${shop.options.apiLatencyMs} ms; photo versions ${shop.options.photoVersions ? 'listed' : 'not listed (ETag only)'}`,
			'Press Ctrl+C to stop.',
			'',
		].join('\n'),
	);
	const readyFile = process.env.SHOP_READY_FILE;
	if (readyFile) {
		writeFileSync(
			`${readyFile}.partial`,
			JSON.stringify({ url: shop.url, productsUrl: shop.productsUrl }),
		);
		renameSync(`${readyFile}.partial`, readyFile);
	}
}

main().catch((error: unknown) => {
	process.stderr.write(`shop: ${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(1);
});
