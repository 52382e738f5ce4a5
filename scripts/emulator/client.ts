import { request } from 'undici';

import { DEFAULT_ACCOUNT, type Emulator } from './index';

/** Small HTTP client for the emulator's tests: raw status, headers and body, no redirects. */
export interface CallOptions {
	/** `false` sends no Authorization header; default: the default account. */
	auth?: { username: string; password: string } | false;
	/** Customer headers; `false` sends none; default: service id 1001. */
	customer?: { customerId: string; customerIdType: string } | false;
	headers?: Record<string, string>;
	body?: string | Buffer;
}

export interface CallResult {
	status: number;
	headers: Record<string, string>;
	text: string;
	raw: Buffer;
	json<T = unknown>(): T;
}

export const NORTH = { customerId: '1001', customerIdType: 'ServiceID' };

export function basic(username: string, password: string): string {
	return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

export async function call(
	emulator: Emulator | string,
	method: 'GET' | 'PUT' | 'POST' | 'HEAD' | 'DELETE',
	path: string,
	options: CallOptions = {},
): Promise<CallResult> {
	const base = typeof emulator === 'string' ? emulator : emulator.url;
	const headers: Record<string, string> = { ...(options.headers ?? {}) };
	const auth = options.auth === undefined ? DEFAULT_ACCOUNT : options.auth;
	if (auth) headers.authorization = basic(auth.username, auth.password);
	const customer = options.customer === undefined ? NORTH : options.customer;
	if (customer) {
		headers.customerId = customer.customerId;
		headers.customerIdType = customer.customerIdType;
	}
	const response = await request(`${base}${path}`, { method, headers, body: options.body });
	const raw = Buffer.from(await response.body.arrayBuffer());
	const flat: Record<string, string> = {};
	for (const [name, value] of Object.entries(response.headers)) {
		if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
	}
	const text = raw.toString('utf8');
	return {
		status: response.statusCode,
		headers: flat,
		text,
		raw,
		json: <T>() => JSON.parse(text) as T,
	};
}

export function putXml(
	emulator: Emulator,
	xml: string | Buffer,
	path = '/api/xml',
	options: CallOptions = {},
) {
	return call(emulator, 'PUT', path, {
		...options,
		headers: { 'content-type': 'application/xml', ...(options.headers ?? {}) },
		body: xml,
	});
}

export interface FilePart {
	name?: string;
	fileName?: string;
	contentType?: string;
	data: Buffer | string;
}

/** Hand-built multipart body, so the emulator's parser is tested against exact bytes. */
export function multipart(
	parts: FilePart[],
	boundary = '----emulator-test-boundary',
): {
	body: Buffer;
	contentType: string;
} {
	const chunks: Buffer[] = [];
	for (const part of parts) {
		const disposition = [`form-data; name="${part.name ?? 'file'}"`];
		if (part.fileName !== undefined) disposition.push(`filename="${part.fileName}"`);
		chunks.push(
			Buffer.from(
				`--${boundary}\r\nContent-Disposition: ${disposition.join('; ')}\r\n` +
					`Content-Type: ${part.contentType ?? 'application/octet-stream'}\r\n\r\n`,
			),
			Buffer.isBuffer(part.data) ? part.data : Buffer.from(part.data),
			Buffer.from('\r\n'),
		);
	}
	chunks.push(Buffer.from(`--${boundary}--\r\n`));
	return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

export function today(emulator: Emulator): string {
	return new Date(emulator.clock.now()).toISOString().slice(0, 10);
}
