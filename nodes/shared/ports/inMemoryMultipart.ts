import { createHash, randomBytes } from 'crypto';

import {
	checkPartContentType,
	type FilePart,
	type MultipartUpload,
	type PartDigest,
} from './multipart';

/*
 * Multipart bodies built in memory: the default of every edition, and the verified edition's (n8n
 * Cloud) own, since n8n's rules for verified packages allow neither `stream` nor a runtime
 * dependency such as form-data (the full edition streams: ../fullEdition/streamedMultipart.ts). The
 * body is one Buffer, encoded here as RFC 7578 describes. It holds every part of the request
 * in memory while the request is sent: the parts' bytes plus their headers, and while it is
 * assembled one more part (every part more when a part's size is not known beforehand).
 */

const CRLF = '\r\n';

/**
 * A name or file name inside the quotes of Content-Disposition, encoded as browsers send forms
 * (the HTML standard's multipart/form-data encoding, which RFC 7578 points to): a quote, CR and LF
 * are percent-encoded, anything else goes as UTF-8.
 */
function quotedValue(value: string): string {
	return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function partHeader(boundary: string, part: FilePart): string {
	checkPartContentType(part);
	return (
		`--${boundary}${CRLF}` +
		`Content-Disposition: form-data; name="${quotedValue(part.name)}"; filename="${quotedValue(part.filename)}"${CRLF}` +
		`Content-Type: ${part.contentType}${CRLF}${CRLF}`
	);
}

function measured(data: Buffer): PartDigest {
	return { md5: createHash('md5').update(data).digest('hex'), bytes: data.length };
}

interface Encoded {
	body: Buffer;
	digests: PartDigest[];
}

/**
 * The body when every part's size is known: each part is copied into it as soon as it is read, so
 * that the body and one part are in memory together, not the body and all its parts. Undefined when
 * a size is unknown, or when a part has another length than its size said.
 */
async function encodeIntoKnownLength(
	heads: Buffer[],
	closing: Buffer,
	parts: FilePart[],
): Promise<Encoded | undefined> {
	if (parts.some((part) => part.size === undefined)) return undefined;
	const length = parts.reduce(
		(sum, part, n) => sum + heads[n].length + (part.size as number) + CRLF.length,
		closing.length,
	);
	const body = Buffer.allocUnsafe(length);
	const digests: PartDigest[] = [];
	let offset = 0;
	for (const [n, part] of parts.entries()) {
		const data = await part.read();
		if (data.length !== part.size) return undefined;
		digests.push(measured(data));
		offset += heads[n].copy(body, offset);
		offset += data.copy(body, offset);
		offset += body.write(CRLF, offset, 'latin1');
	}
	closing.copy(body, offset);
	return { body, digests };
}

/** The body of parts read whole first, then joined. */
async function encodeByJoining(
	heads: Buffer[],
	closing: Buffer,
	parts: FilePart[],
): Promise<Encoded> {
	const chunks: Buffer[] = [];
	const digests: PartDigest[] = [];
	for (const [n, part] of parts.entries()) {
		const data = await part.read();
		digests.push(measured(data));
		chunks.push(heads[n], data, Buffer.from(CRLF, 'latin1'));
	}
	chunks.push(closing);
	return { body: Buffer.concat(chunks), digests };
}

/** A body of `parts`, read whole on the first attempt and sent again as it is on the next ones. */
export function encodeMultipart(parts: FilePart[]): MultipartUpload {
	// 24 random hex digits: no file's bytes contain the delimiter but by a chance of 2^-96.
	const boundary = `----n8nFormBoundary${randomBytes(12).toString('hex')}`;
	let encoded: Buffer | undefined;
	let digests: PartDigest[] = [];
	return {
		headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
		body: async () => {
			if (encoded) return encoded;
			const heads = parts.map((part) => Buffer.from(partHeader(boundary, part), 'utf8'));
			const closing = Buffer.from(`--${boundary}--${CRLF}`, 'latin1');
			const result =
				(await encodeIntoKnownLength(heads, closing, parts)) ??
				(await encodeByJoining(heads, closing, parts));
			encoded = result.body;
			digests = result.digests;
			return encoded;
		},
		digests: () => digests,
		close: () => {
			encoded = undefined;
		},
	};
}

/** Reads a part once to learn its md5 and length. */
export async function digestOf(part: FilePart): Promise<PartDigest> {
	return measured(await part.read());
}
