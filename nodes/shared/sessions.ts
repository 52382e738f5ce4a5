import { NodeApiError } from 'n8n-workflow';

import { readErrorDocument, type ErrorDocumentFields } from './errorDocument';
import type { CustomerOverride, ServiceContext } from './transport';
import {
	cancelledError,
	cancelSignal,
	fetchServiceUrl,
	RefusedLoginError,
	resolveServiceUrl,
	serviceRequest,
	sleepOrCancel,
} from './transport';

export type SessionStatus = 'processing' | 'succeeded' | 'failed';

export interface SessionOutcome {
	sessionId: string;
	status: SessionStatus;
	errorUrl?: string;
	errorMessage?: string;
	errorDocument?: ErrorDocumentFields['errorDocument'];
	errorText?: string;
	/** Why the error message was asked for but is missing; the session's status stands. */
	warning?: string;
}

/**
 * A session a wait could not follow: the service does not know it (404, a wrong ID of one item), or
 * its status could not be read (after the transport's own tries). It fails its own items, never the
 * wait for the sessions of the other items.
 */
export interface UnfollowedSession {
	sessionId: string;
	error: Error;
}

export type WaitResult = SessionOutcome | UnfollowedSession;

export function isUnfollowedSession(result: WaitResult): result is UnfollowedSession {
	return 'error' in result;
}

export interface SessionOutcomeOptions {
	includeErrorMessage?: boolean;
	itemIndex?: number;
	customer?: CustomerOverride;
}

/** One session of a node run to wait for, with how to ask about it. */
export interface SessionToAwait {
	sessionId: string;
	/** The input item the session belongs to, named in errors. */
	itemIndex: number;
	/** The customer node the session was uploaded for: its status is asked for with it. */
	customer?: CustomerOverride;
	includeErrorMessage: boolean;
	/** How long this session may be waited for, from the start of the wait (the item's own timeout). */
	timeoutMs: number;
}

export interface WaitPacing {
	/** Delay between the first round of polls and the second; later rounds wait longer, up to `maxDelayMs`. */
	initialDelayMs?: number;
	maxDelayMs?: number;
}

const DEFAULT_INITIAL_DELAY_MS = 5_000;
const DEFAULT_MAX_DELAY_MS = 60_000;
const BACKOFF_FACTOR = 1.6;
/** Polls of different sessions in flight at once; the throttle decides when each really goes. */
const POLL_CONCURRENCY = 4;

const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

// Braces, dashes and case vary between tools that copy a GUID; the hex digits are what matter.
const GUID = '[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}';
const SESSION_ID_PATTERN = new RegExp(`^(?:${GUID}|\\{${GUID}\\})$`, 'i');

/**
 * The session id as the service wants it in a path, or undefined when the text is not GUID-like.
 * Surrounding whitespace and JSON quotes (an upload answer read as JSON) are dropped.
 */
export function normalizeSessionId(value: unknown): string | undefined {
	if (typeof value !== 'string') return undefined;
	let id = value.trim();
	if (id.length >= 2 && id.startsWith('"') && id.endsWith('"')) id = id.slice(1, -1).trim();
	return SESSION_ID_PATTERN.test(id) ? id : undefined;
}

/**
 * One GET /api/status/{id}/result: 202 means still processing, 200 finished without errors, a
 * redirect finished with errors and points at the error document.
 */
export async function getSessionOutcome(
	context: ServiceContext,
	sessionId: string,
	options: SessionOutcomeOptions = {},
): Promise<SessionOutcome> {
	const { itemIndex, customer } = options;
	const response = await serviceRequest(context, {
		method: 'GET',
		path: `/api/status/${encodeURIComponent(sessionId)}/result`,
		responseType: 'text',
		allowStatus: [202, ...REDIRECT_STATUSES],
		itemIndex,
		customer,
	});

	if (response.statusCode === 202) return { sessionId, status: 'processing' };
	if (!REDIRECT_STATUSES.includes(response.statusCode)) return { sessionId, status: 'succeeded' };

	const location = response.headers.location;
	const outcome: SessionOutcome = { sessionId, status: 'failed' };
	if (location) {
		outcome.errorUrl = await resolveServiceUrl(context, location, itemIndex);
		if (options.includeErrorMessage) {
			const fetched = await fetchServiceUrl(context, outcome.errorUrl, itemIndex).then(
				(response) => ({ response }),
				(error: Error) => ({ error }),
			);
			if ('response' in fetched) {
				Object.assign(outcome, readErrorDocument(fetched.response.body));
			} else {
				if (cancelSignal(context)?.aborted) throw fetched.error;
				// The session has finished, whatever became of its error document (gone, or on a host
				// that wants other credentials): failing here would make every later check fail the same
				// way, and a trigger would never report the session.
				outcome.warning = `The error message could not be fetched: ${fetched.error.message}`;
			}
		}
	}
	return outcome;
}

/** One status poll of the wait: sessions named alike by several items are asked about once. */
interface Poll {
	session: SessionToAwait;
	deadline: number;
	result?: WaitResult;
}

function pollKey(session: SessionToAwait): string {
	return JSON.stringify([
		session.sessionId,
		session.customer?.customerIdType,
		session.customer?.customerId,
		session.includeErrorMessage,
	]);
}

/**
 * Polls the sessions of a node run together until each has finished or its own timeout has passed.
 * The first round asks every session at once (documents are often processed by the time they are
 * all uploaded); the next follows after `initialDelayMs`, and the delays grow to `maxDelayMs`, since
 * every poll costs a bucket token. A round also starts at the earliest pending deadline, so every
 * session is asked once more when its time is up; a round always asks every pending session (the
 * account's rate limit may stretch it). A session named by several items is awaited as long as the
 * longest of their timeouts. Sessions still unfinished then come back as `processing`; a session whose
 * poll failed comes back as an UnfollowedSession at once: the transport has already tried it as often
 * as a request is tried, so it is not asked again. A refused login (a 401 or 403 after which the
 * credential's own login is refused too) fails every session not yet answered with its error, without
 * a request each. Only a cancelled execution (or a poll's deadline) ends the wait for all. Returns the
 * outcomes in the order of `sessions`.
 */
export async function waitForSessions(
	context: ServiceContext,
	sessions: SessionToAwait[],
	pacing: WaitPacing = {},
): Promise<WaitResult[]> {
	const initialDelayMs = Math.max(0, pacing.initialDelayMs ?? DEFAULT_INITIAL_DELAY_MS);
	const maxDelayMs = Math.max(initialDelayMs, pacing.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
	const start = Date.now();
	const signal = cancelSignal(context);
	const node = context.getNode();

	const polls = new Map<string, Poll>();
	for (const session of sessions) {
		// A deadline that is no number would never pass: the wait would poll for as long as a session runs.
		const deadline =
			start + (Number.isFinite(session.timeoutMs) ? Math.max(0, session.timeoutMs) : 0);
		const poll = polls.get(pollKey(session));
		if (poll) poll.deadline = Math.max(poll.deadline, deadline);
		// Its errors name the first item that named it.
		else polls.set(pollKey(session), { session, deadline });
	}

	let pending = [...polls.values()];
	let delayMs = 0;
	let firstRound = true;
	// A refused login: the sessions not yet answered fail with its error instead of each costing a
	// request that would be refused alike.
	let refusedLogin: Error | undefined;
	while (pending.length > 0) {
		const nextDeadline = Math.min(...pending.map((poll) => poll.deadline));
		await sleepOrCancel(Math.min(delayMs, Math.max(0, nextDeadline - Date.now())), signal, node);
		const queue = [...pending];
		const worker = async () => {
			for (let poll = queue.shift(); poll !== undefined; poll = queue.shift()) {
				const { sessionId, includeErrorMessage, customer, itemIndex } = poll.session;
				if (refusedLogin) {
					poll.result = { sessionId, error: refusedLogin };
					continue;
				}
				try {
					const outcome = await getSessionOutcome(context, sessionId, {
						includeErrorMessage,
						customer,
						itemIndex,
					});
					if (outcome.status !== 'processing') poll.result = outcome;
				} catch (error) {
					// Asking again in the next round would multiply the transport's tries: the session's
					// items fail with this error, and the others are still awaited.
					poll.result = { sessionId, error: error as Error };
					if (error instanceof RefusedLoginError) refusedLogin = error;
				}
			}
		};
		await Promise.all(Array.from({ length: Math.min(POLL_CONCURRENCY, queue.length) }, worker));
		if (signal?.aborted) throw cancelledError(node, undefined, signal.reason);
		const now = Date.now();
		pending = pending.filter((poll) => poll.result === undefined && poll.deadline > now);
		delayMs = firstRound ? initialDelayMs : Math.min(maxDelayMs, delayMs * BACKOFF_FACTOR);
		firstRound = false;
	}

	return sessions.map((session) => {
		const poll = polls.get(pollKey(session)) as Poll;
		return poll.result ?? { sessionId: session.sessionId, status: 'processing' };
	});
}

/** The service does not know what was asked for (404): asking again will not change that. */
export function isNotFound(error: unknown): boolean {
	return error instanceof NodeApiError && Number(error.httpCode) === 404;
}
