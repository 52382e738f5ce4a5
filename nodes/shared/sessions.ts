import { NodeApiError } from 'n8n-workflow';

import type { CustomerOverride, ServiceContext } from './transport';
import { cancelSignal, fetchServiceUrl, resolveServiceUrl, serviceRequest, sleepOrCancel } from './transport';

export type SessionStatus = 'processing' | 'succeeded' | 'failed';

export interface SessionOutcome {
	sessionId: string;
	status: SessionStatus;
	errorUrl?: string;
	errorMessage?: string;
	/** Why the error message was asked for but is missing; the session's status stands. */
	warning?: string;
}

/**
 * A session a wait could not follow because the service does not know it (404): a wrong ID of one
 * item, which must not end the wait for the sessions of the other items.
 */
export interface UnknownSession {
	sessionId: string;
	error: Error;
}

export type WaitResult = SessionOutcome | UnknownSession;

export function isUnknownSession(result: WaitResult): result is UnknownSession {
	return 'error' in result;
}

export interface SessionOutcomeOptions {
	includeErrorMessage?: boolean;
	itemIndex?: number;
	customer?: CustomerOverride;
}

export interface WaitForSessionsOptions {
	timeoutMs: number;
	includeErrorMessage?: boolean;
	/** Delay between the first round of polls and the second; later rounds wait longer, up to `maxDelayMs`. */
	initialDelayMs?: number;
	maxDelayMs?: number;
	customer?: CustomerOverride;
	/** The input item of each session, named in the errors of its polls. */
	itemIndexes?: ReadonlyMap<string, number>;
}

const DEFAULT_INITIAL_DELAY_MS = 5_000;
const DEFAULT_MAX_DELAY_MS = 60_000;
const BACKOFF_FACTOR = 1.6;
/** Polls of different sessions in flight at once; the throttle decides when each really goes. */
const POLL_CONCURRENCY = 4;
/** A session whose polls fail this many times in a row (server or network errors) ends the wait. */
const MAX_CONSECUTIVE_POLL_FAILURES = 3;

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
	this: ServiceContext,
	sessionId: string,
	options: SessionOutcomeOptions = {},
): Promise<SessionOutcome> {
	const { itemIndex, customer } = options;
	const response = await serviceRequest.call(this, {
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
		outcome.errorUrl = await resolveServiceUrl.call(this, location, itemIndex);
		if (options.includeErrorMessage) {
			try {
				const errorDocument = await fetchServiceUrl.call(this, outcome.errorUrl, itemIndex);
				outcome.errorMessage = String(errorDocument.body ?? '').trim();
			} catch (error) {
				if (cancelSignal(this)?.aborted) throw error;
				// The session has finished, whatever became of its error document (gone, or on a host
				// that wants other credentials): failing here would make every later check fail the same
				// way, and a trigger would never report the session.
				outcome.warning = `The error message could not be fetched: ${(error as Error).message}`;
			}
		}
	}
	return outcome;
}

/**
 * Polls many sessions together until each has finished or the timeout has passed. The first round
 * asks every session at once (documents are often processed by the time they are all uploaded);
 * the next follows after `initialDelayMs`, and the delays grow to `maxDelayMs`, since every poll
 * costs a bucket token. The last round starts at the deadline; a round always asks every pending
 * session (the account's rate limit may stretch it). Sessions still unfinished then come back as
 * `processing`; a session the service does not know comes back as an UnknownSession.
 */
export async function waitForSessions(
	this: ServiceContext,
	sessionIds: string[],
	options: WaitForSessionsOptions,
): Promise<Map<string, WaitResult>> {
	const initialDelayMs = Math.max(0, options.initialDelayMs ?? DEFAULT_INITIAL_DELAY_MS);
	const maxDelayMs = Math.max(initialDelayMs, options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
	// A deadline that is no number would never pass: the wait would poll for as long as a session runs.
	const timeoutMs = Number.isFinite(options.timeoutMs) ? Math.max(0, options.timeoutMs) : 0;
	const deadline = Date.now() + timeoutMs;
	const signal = cancelSignal(this);
	const node = this.getNode();

	const outcomes = new Map<string, WaitResult>();
	const failures = new Map<string, number>();
	let pending = [...new Set(sessionIds)];
	let delayMs = 0;
	let firstRound = true;

	while (pending.length > 0) {
		await sleepOrCancel(Math.min(delayMs, Math.max(0, deadline - Date.now())), signal, node);
		const stillPending: string[] = [];
		const queue = [...pending];
		let stopped = false;
		const worker = async () => {
			for (let id = queue.shift(); id !== undefined && !stopped; id = queue.shift()) {
				try {
					const outcome = await getSessionOutcome.call(this, id, {
						includeErrorMessage: options.includeErrorMessage,
						customer: options.customer,
						itemIndex: options.itemIndexes?.get(id),
					});
					failures.delete(id);
					if (outcome.status === 'processing') stillPending.push(id);
					else outcomes.set(id, outcome);
				} catch (error) {
					if (isNotFound(error)) {
						outcomes.set(id, { sessionId: id, error: error as Error });
						continue;
					}
					const count = (failures.get(id) ?? 0) + 1;
					if (!isTransient(error) || count >= MAX_CONSECUTIVE_POLL_FAILURES) {
						stopped = true;
						throw error;
					}
					failures.set(id, count);
					stillPending.push(id);
				}
			}
		};
		await Promise.all(Array.from({ length: Math.min(POLL_CONCURRENCY, queue.length) }, worker));
		pending = stillPending;
		if (Date.now() >= deadline) break;
		delayMs = firstRound ? initialDelayMs : Math.min(maxDelayMs, delayMs * BACKOFF_FACTOR);
		firstRound = false;
	}

	const result = new Map<string, WaitResult>();
	for (const id of new Set(sessionIds)) {
		result.set(id, outcomes.get(id) ?? { sessionId: id, status: 'processing' });
	}
	return result;
}

/** One session of a node run to wait for, with how to ask about it. */
export interface SessionToAwait {
	sessionId: string;
	/** The input item the session belongs to, named in errors. */
	itemIndex: number;
	/** The customer node the session was uploaded for: its status is asked for with it. */
	customer?: CustomerOverride;
	includeErrorMessage: boolean;
}

/**
 * Waits for all sessions of a node run together, sharing one timeout. Sessions asked about with
 * other customer headers, or with and without their error message, cannot share a waitForSessions;
 * one runs per kind, all at once. Returns the outcomes in the order of `sessions`.
 */
export async function waitForAllSessions(
	this: ServiceContext,
	sessions: SessionToAwait[],
	timeoutMs: number,
): Promise<WaitResult[]> {
	const kinds = new Map<string, SessionToAwait[]>();
	for (const session of sessions) {
		const kind = JSON.stringify([session.customer?.customerIdType, session.customer?.customerId, session.includeErrorMessage]);
		kinds.set(kind, [...(kinds.get(kind) ?? []), session]);
	}
	const outcomes = new Map<SessionToAwait, WaitResult>();
	await Promise.all(
		[...kinds.values()].map(async (kind) => {
			const itemIndexes = new Map<string, number>();
			// A session named by several items is polled once; its errors name the first of them.
			for (const { sessionId, itemIndex } of kind) {
				if (!itemIndexes.has(sessionId)) itemIndexes.set(sessionId, itemIndex);
			}
			const result = await waitForSessions.call(
				this,
				kind.map(({ sessionId }) => sessionId),
				{
					timeoutMs,
					includeErrorMessage: kind[0].includeErrorMessage,
					customer: kind[0].customer,
					itemIndexes,
				},
			);
			for (const session of kind) outcomes.set(session, result.get(session.sessionId) as WaitResult);
		}),
	);
	return sessions.map((session) => outcomes.get(session) as WaitResult);
}

function isNotFound(error: unknown): boolean {
	return error instanceof NodeApiError && Number(error.httpCode) === 404;
}

/**
 * Server errors and lost connections may pass; a 4xx answer will not change by asking again, and
 * anything else (a cancelled execution, a broken credential) ends the wait.
 */
function isTransient(error: unknown): boolean {
	if (!(error instanceof NodeApiError)) return false;
	const status = Number(error.httpCode);
	return !Number.isFinite(status) || status === 0 || status >= 500 || status === 429;
}
