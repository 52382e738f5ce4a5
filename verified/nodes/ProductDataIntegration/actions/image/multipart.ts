import { createHash, randomBytes } from 'crypto';

import type { FilePart, MultipartUpload, PartDigest } from './multipartParts';

/*
 * Multipart bodies for the verified edition (n8n Cloud), built in place of ./multipart.ts: n8n's
 * rules for verified packages allow neither `stream` nor a runtime dependency such as form-data, so
 * the body is one Buffer, encoded here as RFC 7578 describes. It holds every part of the request
 * in memory while the request is sent: the parts' bytes plus their headers, and for a moment while
 * it is assembled the parts a second time.
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
	if (/[\r\n]/.test(part.contentType)) throw new Error(`The content type of ${part.filename} spans several lines`);
	return (
		`--${boundary}${CRLF}` +
		`Content-Disposition: form-data; name="${quotedValue(part.name)}"; filename="${quotedValue(part.filename)}"${CRLF}` +
		`Content-Type: ${part.contentType}${CRLF}${CRLF}`
	);
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
			const chunks: Buffer[] = [];
			const read: PartDigest[] = [];
			for (const part of parts) {
				const data = await part.read();
				read.push({ md5: createHash('md5').update(data).digest('hex'), bytes: data.length });
				chunks.push(Buffer.from(partHeader(boundary, part), 'utf8'), data, Buffer.from(CRLF));
			}
			chunks.push(Buffer.from(`--${boundary}--${CRLF}`));
			encoded = Buffer.concat(chunks);
			digests = read;
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
	const data = await part.read();
	return { md5: createHash('md5').update(data).digest('hex'), bytes: data.length };
}
