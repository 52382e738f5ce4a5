import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';

import { receiveUpload } from '../../../scripts/emulator/body';

function fakeRequest(chunks: string[], headers: Record<string, string>): IncomingMessage {
	return Object.assign(Readable.from(chunks.map((c) => Buffer.from(c))), {
		headers,
	}) as unknown as IncomingMessage;
}

describe('receiveUpload', () => {
	let directory: string;
	beforeEach(() => {
		directory = mkdtempSync(join(tmpdir(), 'emulator-receive-'));
	});
	afterEach(() => rmSync(directory, { recursive: true, force: true }));

	it('keeps a body within the limit in memory and writes it to the file', async () => {
		const file = join(directory, 'a.xml');
		const chunked = await receiveUpload(
			fakeRequest(['<a>', 'x', '</a>'], { 'transfer-encoding': 'chunked' }),
			file,
			100,
		);
		expect(chunked).toEqual({ byteLength: 8, body: Buffer.from('<a>x</a>') });
		expect(readFileSync(file, 'utf8')).toBe('<a>x</a>');
		const sized = await receiveUpload(
			fakeRequest(['<a>', '</a>'], { 'content-length': '7' }),
			file,
			100,
		);
		expect(sized).toEqual({ byteLength: 7, body: Buffer.from('<a></a>') });
	});

	it('writes a body beyond the limit to the file only', async () => {
		const file = join(directory, 'b.xml');
		const chunks = Array.from({ length: 50 }, (_, i) => `<chunk n="${i}"/>`);
		const total = Buffer.byteLength(chunks.join(''));
		const variants: Array<Record<string, string>> = [
			{ 'transfer-encoding': 'chunked' },
			{ 'content-length': String(total) },
		];
		for (const headers of variants) {
			const received = await receiveUpload(fakeRequest(chunks, headers), file, 40);
			expect(received).toEqual({ byteLength: total, body: null });
			expect(readFileSync(file, 'utf8')).toBe(chunks.join(''));
		}
	});
});
