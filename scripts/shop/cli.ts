/**
 * `npm run shop`: the fixture shop (./index.ts) on 127.0.0.1:8472, where examples/nightly-sync.json
 * reads its products, for the demo (`npm start` in another terminal). Ctrl+C or SIGTERM stops it, and
 * it stops by itself when the process that started it goes away.
 *
 * SHOP_PORT (8472; 0: a free port), SHOP_PRODUCTS (20), SHOP_PHOTO_BYTES (20000); SHOP_READY_FILE:
 * once it listens, a JSON file `{url, productsUrl}` is written there (whole, never half), for scripts.
 */
import { renameSync, writeFileSync } from 'node:fs';

import { startShop } from './index';

const PARENT_CHECK_MS = 1000;

function integer(name: string, fallback: number, minimum: number): number {
	const raw = process.env[name];
	if (raw === undefined || raw === '') return fallback;
	const value = Number(raw);
	if (!Number.isInteger(value) || value < minimum)
		throw new Error(`${name} must be an integer >= ${minimum}, got "${raw}"`);
	return value;
}

async function main(): Promise<void> {
	const shop = await startShop({
		port: integer('SHOP_PORT', 8472, 0),
		products: integer('SHOP_PRODUCTS', 20, 1),
		photoBytes: integer('SHOP_PHOTO_BYTES', 20_000, 1),
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
