// The service's request pipeline: route, armed fault, authentication, the leaky bucket and the
// customer headers, then the route's handler (routes/, one file per resource).
import type { IncomingMessage, ServerResponse } from 'node:http';

import { authenticate, resolveCustomer } from './auth';
import { drainBody } from './body';
import { deliver, faultAnswer } from './faults';
import { MESSAGES } from './fixtures';
import { denied, invalid, message, send, type Reply } from './replies';
import { authRoutes } from './routes/auth';
import { imageRoutes } from './routes/images';
import { header, type RequestContext, type Route } from './routes/route';
import { statusRoutes } from './routes/status';
import { xmlRoutes } from './routes/xml';
import type { EmulatorStore } from './store';
import type { ResolvedEmulatorOptions } from './types';

export class EmulatorHandler {
	private readonly routes: Route[];
	private readonly timers = new Set<NodeJS.Timeout>();

	constructor(
		private readonly options: ResolvedEmulatorOptions,
		private readonly store: EmulatorStore,
		private readonly fallbackOrigin: () => string,
	) {
		const service = { options, store };
		this.routes = [
			...xmlRoutes(service),
			...authRoutes(service),
			...statusRoutes(service),
			...imageRoutes(service),
		];
	}

	cancelTimers(): void {
		for (const timer of this.timers) clearTimeout(timer);
		this.timers.clear();
	}

	/** Entry point for every request that is not a control route. */
	async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
		const method = req.method ?? 'GET';
		const path = url.pathname;
		const candidates = this.routes.filter((r) => r.pattern.test(path));
		const route = candidates.find((r) => r.method === method);
		const template = candidates.length > 0 ? candidates[0].key.split(' ')[1] : '(unknown route)';
		this.store.countRequest(route ? route.key : `${method} ${template}`);

		const fault = this.store.takeFault(path);
		const refusal = fault ? faultAnswer(fault) : undefined;
		if (refusal) {
			await drainBody(req);
			return send(res, refusal);
		}

		let reply: Reply;
		try {
			reply = await this.dispatch(req, url, route, candidates.length > 0);
		} catch (error) {
			// A client that went away mid-request is nothing to report.
			if (req.destroyed || res.destroyed) return;
			// A fault of the emulator itself: answer like a failing service and keep the trace visible.
			process.stderr.write(`emulator: ${error instanceof Error ? error.stack : String(error)}\n`);
			await drainBody(req).catch(() => undefined);
			reply = message(500, MESSAGES.internalError);
		}
		deliver(req, res, reply, fault, this.timers);
	}

	private async dispatch(
		req: IncomingMessage,
		url: URL,
		route: Route | undefined,
		pathKnown: boolean,
	): Promise<Reply> {
		if (!route) {
			await drainBody(req);
			return pathKnown ? message(405, MESSAGES.methodNotAllowed) : message(404, MESSAGES.notFound);
		}
		const auth = authenticate(header(req, 'authorization'), this.options.accounts);
		if (!auth) {
			await drainBody(req);
			this.store.stats.rejected401++;
			return denied();
		}
		const decision = this.store.buckets.take(auth.account.username, this.store.now());
		if (!decision.admitted) {
			await drainBody(req);
			this.store.stats.rejected429++;
			return this.rateLimited(decision.retryAfterMs);
		}
		this.store.notePeak(decision.level);
		const customer = resolveCustomer(
			auth.account,
			header(req, 'customerid'),
			header(req, 'customeridtype'),
			route.customerHeaders === 'required',
		);
		if (!customer.ok) {
			await drainBody(req);
			this.store.stats.rejected401++;
			return denied();
		}
		const match = route.pattern.exec(url.pathname) as RegExpExecArray;
		let params: string[];
		try {
			params = match.slice(1).map((p) => decodeURIComponent(p));
		} catch {
			await drainBody(req);
			return invalid();
		}
		const host = header(req, 'host');
		const context: RequestContext = {
			req,
			url,
			params,
			auth,
			customer: customer.customer,
			origin: host ? `http://${host}` : this.fallbackOrigin(),
		};
		const reply = await route.handle(context);
		await drainBody(req);
		return reply;
	}

	private rateLimited(retryAfterMs: number): Reply {
		const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
		const reply = message(this.options.rateLimitAnswer === '503' ? 503 : 429, MESSAGES.rateLimited);
		const headers = reply.headers as Record<string, string>;
		if (this.options.rateLimitAnswer === '429-date') {
			headers['Retry-After'] = new Date(this.store.now() + seconds * 1000).toUTCString();
		} else if (this.options.rateLimitAnswer !== '429-none') {
			headers['Retry-After'] = String(seconds);
		}
		return reply;
	}
}
