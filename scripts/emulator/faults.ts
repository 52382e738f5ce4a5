// The faults a test arms through the control route, as the client meets them: an answer in place of
// the request's handling, or the handled request's answer lost, withheld or late.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

import { MESSAGES } from './fixtures';
import { message, send, text, TEXT_TYPE, type Reply } from './replies';
import type { FaultRule } from './types';

/** `count` bytes of filler text, produced as they are sent. */
function filler(count: number): Readable {
	const chunk = Buffer.alloc(64 * 1024, 'x');
	return Readable.from(
		(function* () {
			for (let left = count; left > 0; left -= chunk.length)
				yield left >= chunk.length ? chunk : chunk.subarray(0, left);
		})(),
	);
}

/** A refusal with the fault's Retry-After exactly as given, or none. */
function withRetryAfter(reply: Reply, fault: FaultRule): Reply {
	return fault.retryAfter === undefined
		? reply
		: { ...reply, headers: { ...reply.headers, 'Retry-After': fault.retryAfter } };
}

/** The answer of a fault that replaces the request's handling (nothing processed), if it is one. */
export function faultAnswer(fault: FaultRule): Reply | undefined {
	switch (fault.kind) {
		case '500':
			return message(500, MESSAGES.internalError);
		case '503':
			return withRetryAfter(text(503, MESSAGES.unavailable), fault);
		case '429':
			return withRetryAfter(message(429, MESSAGES.rateLimited), fault);
		case 'redirect':
			return { status: 302, headers: { Location: fault.location ?? '/' } };
		case 'huge':
			return {
				status: fault.status ?? 200,
				headers: { 'Content-Type': TEXT_TYPE },
				body: filler(fault.bytes ?? 0),
			};
		default:
			return undefined;
	}
}

/**
 * An upload's answer (handled in full, every image stored) with one entry's hashcode replaced by
 * the fault's value, as a service whose answer names one part without a usable hashcode gives it.
 */
function withHostileEntry(reply: Reply, fault: FaultRule): Reply {
	if (typeof reply.body !== 'string') return reply;
	let entries: unknown;
	try {
		entries = JSON.parse(reply.body);
	} catch {
		return reply;
	}
	const index = fault.entry ?? 0;
	if (!Array.isArray(entries) || index >= entries.length) return reply;
	const entry: unknown = entries[index];
	entries[index] =
		typeof entry === 'object' && entry !== null ? { ...entry, hashcode: fault.value } : fault.value;
	return { ...reply, body: JSON.stringify(entries) };
}

/** Ends a streamed answer that will never be sent. */
function dropBody(reply: Reply): void {
	if (reply.body && typeof reply.body !== 'string' && !Buffer.isBuffer(reply.body))
		reply.body.destroy();
}

/** Sends the answer of a request handled in full, as its fault (if any) lets it through. */
export function deliver(
	req: IncomingMessage,
	res: ServerResponse,
	reply: Reply,
	fault: FaultRule | null,
	timers: Set<NodeJS.Timeout>,
): void {
	if (fault?.kind === 'reset') {
		// The request was received and handled in full; only the answer is lost. A client cannot
		// tell whether an upload took place, which is exactly the case it must not retry blindly.
		dropBody(reply);
		req.socket.resetAndDestroy();
		return;
	}
	if (fault?.kind === 'hang') {
		// Handled in full, never answered: the connection stays open until the client gives up
		// or the emulator closes.
		dropBody(reply);
		return;
	}
	if (fault?.kind === 'hostile-entry') {
		send(res, withHostileEntry(reply, fault));
		return;
	}
	if (fault?.kind === 'slow') {
		const timer = setTimeout(() => {
			timers.delete(timer);
			send(res, reply);
		}, fault.delayMs);
		timers.add(timer);
		return;
	}
	send(res, reply);
}
