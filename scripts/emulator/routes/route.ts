// What every route is: its method and path, the customer headers it needs, and its handler.
import type { IncomingMessage } from 'node:http';

import type { Authenticated } from '../auth';
import type { Reply } from '../replies';
import type { EmulatorStore } from '../store';
import type { EmulatorCustomer, ResolvedEmulatorOptions } from '../types';

export interface RequestContext {
	req: IncomingMessage;
	url: URL;
	params: string[];
	auth: Authenticated;
	/** Customer named by the headers; null where the headers are optional and were not sent. */
	customer: EmulatorCustomer | null;
	/** Origin the client used, for the absolute URLs the service hands out. */
	origin: string;
}

export interface Route {
	method: string;
	pattern: RegExp;
	key: string;
	customerHeaders: 'required' | 'optional';
	handle: (context: RequestContext) => Promise<Reply> | Reply;
}

/** What a route's handler works with: the emulator's options and its store. */
export interface Service {
	options: ResolvedEmulatorOptions;
	store: EmulatorStore;
}

/** A route from its key, e.g. `GET /api/xml/{date}`, which also names it in the request counts. */
export function route(
	key: string,
	pattern: RegExp,
	customerHeaders: Route['customerHeaders'],
	handle: Route['handle'],
): Route {
	return { method: key.split(' ')[0], pattern, key, customerHeaders, handle };
}

export function header(req: IncomingMessage, name: string): string | undefined {
	const value = req.headers[name];
	return Array.isArray(value) ? value.join(', ') : value;
}
