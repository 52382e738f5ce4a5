import { createHash, type Hash } from 'crypto';
import FormData from 'form-data';
import { Readable } from 'stream';

import {
	checkPartContentType,
	type FilePart,
	type MultipartUpload,
	type PartDigest,
} from '../ports';

/*
 * The full edition's multipart bodies (the edition's encodeMultipart, ../ports): parts held in n8n's binary
 * store are streamed from it as the request is sent and hashed on the way, never held whole; a part
 * in the item's data is read when the body reaches it.
 */

/** A body of `parts` for each attempt; each part is opened only when the body reaches it. */
export function encodeMultipart(parts: FilePart[]): MultipartUpload {
	let meters: MeteredStream[] = [];
	const close = () => {
		for (const meter of meters) meter.destroy();
	};
	return {
		// FormData brings its Content-Type (with its boundary) and its length to n8n's HTTP layer.
		headers: {},
		// Called for every attempt: a stream that was sent once cannot be sent again after a 429.
		body: async () => {
			parts.forEach(checkPartContentType);
			close();
			const form = new FormData();
			meters = parts.map((part) => {
				const meter = new MeteredStream(opener(part));
				form.append(part.name, meter, {
					filename: part.filename,
					contentType: part.contentType,
					knownLength: part.size,
				});
				return meter;
			});
			return form;
		},
		digests: () => meters.map((meter) => meter.digest()),
		close,
	};
}

/** A part's bytes as a stream: n8n's stream of stored data, or the data in memory, read when first asked for. */
function opener(part: FilePart): () => Promise<NodeJS.ReadableStream> {
	return part.open ?? (async () => Readable.from([await part.read()]));
}

/** Reads a part once to learn its md5 and length, as a stream when it is stored. */
export async function digestOf(part: FilePart): Promise<PartDigest> {
	const meter = new MeteredStream(opener(part));
	meter.resume();
	await new Promise<void>((resolve, reject) => {
		meter.once('end', resolve);
		meter.once('error', reject);
	});
	return meter.digest() as PartDigest;
}

/**
 * A stored part as a stream that opens n8n's binary stream only when it is first read (a
 * multipart body with many parts does not hold all files open at once) and hashes what passes.
 */
class MeteredStream extends Readable {
	private bytes = 0;

	private complete = false;

	private readonly hash: Hash = createHash('md5');

	private source?: Readable;

	private opening = false;

	constructor(private readonly open: () => Promise<NodeJS.ReadableStream>) {
		super();
	}

	/** The md5 and length of the whole part, or undefined while it has not been read to its end. */
	digest(): PartDigest | undefined {
		return this.complete ? { md5: this.hash.copy().digest('hex'), bytes: this.bytes } : undefined;
	}

	override _read(): void {
		if (this.source) {
			this.source.resume();
			return;
		}
		if (this.opening) return;
		this.opening = true;
		this.open().then(
			(source) => this.attach(source instanceof Readable ? source : new Readable().wrap(source)),
			(error: Error) => this.destroy(error),
		);
	}

	override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
		this.source?.destroy();
		callback(error);
	}

	private attach(source: Readable): void {
		if (this.destroyed) {
			source.destroy();
			return;
		}
		this.source = source;
		source.on('data', (chunk: Buffer | string) => {
			const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
			this.hash.update(data);
			this.bytes += data.length;
			if (!this.push(data)) source.pause();
		});
		source.once('end', () => {
			this.complete = true;
			this.push(null);
		});
		source.once('error', (error) => this.destroy(error));
	}
}
