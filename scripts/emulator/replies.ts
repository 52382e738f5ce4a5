// What the emulator answers with, and how an answer is sent.
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';

import { MESSAGES } from './fixtures';

export interface Reply {
	status: number;
	headers?: Record<string, string>;
	body?: string | Buffer | Readable;
}

const JSON_TYPE = 'application/json; charset=utf-8';
export const TEXT_TYPE = 'text/plain; charset=utf-8';

export function json(status: number, value: unknown): Reply {
	return { status, headers: { 'Content-Type': JSON_TYPE }, body: JSON.stringify(value) };
}

export function text(status: number, value: string): Reply {
	return { status, headers: { 'Content-Type': TEXT_TYPE }, body: value };
}

export function message(status: number, value: string): Reply {
	return json(status, { message: value });
}

export const invalid = () => message(400, MESSAGES.invalid);
export const denied = () => message(401, MESSAGES.denied);
export const sessionNotFound = () => message(404, MESSAGES.sessionNotFound);

export function send(res: ServerResponse, reply: Reply): void {
	if (res.destroyed) return;
	const headers = { ...(reply.headers ?? {}) };
	const body = reply.body;
	if (body === undefined || typeof body === 'string' || Buffer.isBuffer(body)) {
		const bytes =
			body === undefined ? 0 : typeof body === 'string' ? Buffer.byteLength(body) : body.length;
		headers['Content-Length'] = String(bytes);
		res.writeHead(reply.status, headers);
		res.end(res.req.method === 'HEAD' ? undefined : body);
		return;
	}
	res.writeHead(reply.status, headers);
	body.on('error', () => res.destroy());
	body.pipe(res);
}
