// Reading request bodies: small ones whole, uploads streamed to a file, the rest drained.
import { createWriteStream } from 'node:fs';
import type { IncomingMessage } from 'node:http';

/** Reads a whole body into memory: image uploads and control requests, both small. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
	const chunks: Buffer[] = [];
	for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
	return Buffer.concat(chunks);
}

/**
 * Streams an upload to its file and keeps it in memory as well while it is small enough to be
 * checked as text. A larger body (beyond what a V8 string can hold) goes to the file only, so even
 * a multi-gigabyte upload costs no more memory than a chunk.
 */
export async function receiveUpload(
	req: IncomingMessage,
	filePath: string,
	checkLimit: number,
): Promise<{ byteLength: number; body: Buffer | null }> {
	const file = createWriteStream(filePath);
	const failed = new Promise<never>((_, reject) => file.once('error', reject));
	failed.catch(() => undefined);
	const announced = Number(req.headers['content-length']);
	const sized =
		Number.isSafeInteger(announced) &&
		announced >= 0 &&
		announced <= checkLimit &&
		req.headers['transfer-encoding'] === undefined;
	const whole = sized ? Buffer.allocUnsafe(announced) : null;
	let chunks: Buffer[] | null = sized ? null : [];
	let byteLength = 0;
	try {
		for await (const chunk of req as AsyncIterable<Buffer>) {
			if (whole) chunk.copy(whole, byteLength);
			byteLength += chunk.length;
			if (chunks) {
				chunks.push(chunk);
				if (byteLength > checkLimit) chunks = null;
			}
			if (!file.write(chunk)) {
				await Promise.race([
					new Promise<void>((resolve) => file.once('drain', () => resolve())),
					failed,
				]);
			}
		}
	} finally {
		await Promise.race([new Promise<void>((resolve) => file.end(resolve)), failed]);
	}
	const body = whole
		? whole.subarray(0, byteLength)
		: chunks
			? Buffer.concat(chunks, byteLength)
			: null;
	return { byteLength, body };
}

/** Lets a body arrive and drops it, so an early answer never races the client's upload. */
export async function drainBody(req: IncomingMessage): Promise<void> {
	if (req.complete || req.readableEnded) return;
	for await (const chunk of req) void chunk;
}
