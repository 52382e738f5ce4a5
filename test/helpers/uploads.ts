import type { Emulator } from '../../scripts/emulator';
import { call } from '../../scripts/emulator/client';

/**
 * The SKUs (the text of each `skuElement`) of the documents the emulator received since its last
 * reset, sorted, read through its own client; resets it, so the next call sees only newer uploads.
 * Imports nothing of n8n, so the end-to-end tests use it too.
 */
export async function takeUploadedSkus(emulator: Emulator, skuElement = 'sku'): Promise<string[]> {
	const skus: string[] = [];
	const element = new RegExp(`<${skuElement}>([^<]*)</${skuElement}>`, 'g');
	for (const { id } of emulator.uploads()) {
		const file = await call(emulator, 'GET', `/api/files/${id}`);
		skus.push(...[...file.text.matchAll(element)].map((match) => match[1]));
	}
	emulator.reset();
	return skus.sort();
}
