export interface MultipartPart {
	name: string | null;
	fileName: string | null;
	contentType: string | null;
	headers: Record<string, string>;
	data: Buffer;
}

export class MultipartError extends Error {}

/** Boundary of a `multipart/form-data` Content-Type, or null when the type is something else. */
export function multipartBoundary(contentType: string | undefined): string | null {
	if (!contentType) return null;
	const [type, ...params] = contentType.split(';');
	if (type.trim().toLowerCase() !== 'multipart/form-data') return null;
	for (const param of params) {
		const eq = param.indexOf('=');
		if (eq < 0) continue;
		if (param.slice(0, eq).trim().toLowerCase() !== 'boundary') continue;
		let value = param.slice(eq + 1).trim();
		if (value.startsWith('"') && value.endsWith('"') && value.length >= 2)
			value = value.slice(1, -1);
		// RFC 2046: 1 to 70 characters.
		return value.length > 0 && value.length <= 70 ? value : null;
	}
	return null;
}

function dispositionParam(disposition: string, param: string): string | null {
	// filename*= (RFC 5987) is preferred over filename= when both are present.
	const extended = new RegExp(`;\\s*${param}\\*\\s*=\\s*([^']*)'[^']*'([^;]*)`, 'i').exec(
		disposition,
	);
	if (extended) {
		try {
			return decodeURIComponent(extended[2].trim());
		} catch {
			throw new MultipartError(`Malformed ${param}* parameter`);
		}
	}
	const quoted = new RegExp(`;\\s*${param}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(disposition);
	if (quoted) return quoted[1].replace(/\\(.)/g, '$1');
	const bare = new RegExp(`;\\s*${param}\\s*=\\s*([^;\\s]+)`, 'i').exec(disposition);
	return bare ? bare[1] : null;
}

function parseHeaders(block: string): Record<string, string> {
	const headers: Record<string, string> = {};
	for (const line of block.split('\r\n')) {
		if (line === '') continue;
		const colon = line.indexOf(':');
		if (colon <= 0) throw new MultipartError('Malformed part header');
		headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
	}
	return headers;
}

/**
 * Splits a complete multipart body into its parts. Part data are views into `body`, not copies.
 * Anything that does not follow RFC 2046 framing (missing boundary, unterminated body, part without
 * a header block) is an error rather than a best guess.
 */
export function parseMultipart(body: Buffer, boundary: string): MultipartPart[] {
	const delimiter = Buffer.from(`--${boundary}`, 'latin1');
	const separator = Buffer.from(`\r\n--${boundary}`, 'latin1');
	let position: number;
	if (body.subarray(0, delimiter.length).equals(delimiter)) {
		position = delimiter.length;
	} else {
		const first = body.indexOf(separator);
		if (first < 0) throw new MultipartError('Boundary not found');
		position = first + separator.length;
	}
	const parts: MultipartPart[] = [];
	for (;;) {
		if (body[position] === 0x2d && body[position + 1] === 0x2d) return parts;
		// Transport padding (spaces, tabs) may follow a delimiter before its CRLF.
		while (body[position] === 0x20 || body[position] === 0x09) position++;
		if (body[position] !== 0x0d || body[position + 1] !== 0x0a) {
			throw new MultipartError('Delimiter not followed by CRLF');
		}
		position += 2;
		const headerEnd = body.indexOf('\r\n\r\n', position, 'latin1');
		let headers: Record<string, string>;
		let dataStart: number;
		if (body[position] === 0x0d && body[position + 1] === 0x0a) {
			headers = {};
			dataStart = position + 2;
		} else {
			if (headerEnd < 0) throw new MultipartError('Unterminated part headers');
			headers = parseHeaders(body.toString('utf8', position, headerEnd));
			dataStart = headerEnd + 4;
		}
		const next = body.indexOf(separator, dataStart);
		if (next < 0) throw new MultipartError('Unterminated multipart body');
		const disposition = headers['content-disposition'] ?? '';
		parts.push({
			name: disposition ? dispositionParam(disposition, 'name') : null,
			fileName: disposition ? dispositionParam(disposition, 'filename') : null,
			contentType: headers['content-type'] ?? null,
			headers,
			data: body.subarray(dataStart, next),
		});
		position = next + separator.length;
	}
}
