import { NodeApiError } from 'n8n-workflow';

import type { CustomerOverride, ServiceContext } from './transport';
import { CREDENTIAL_NAME, checkBaseUrl, fetchServiceUrl, serviceRequest } from './transport';

export type SessionStatus = 'processing' | 'succeeded' | 'failed';

export interface SessionOutcome {
	sessionId: string;
	status: SessionStatus;
	errorUrl?: string;
	errorMessage?: string;
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

	const location = headerValue(response.headers, 'location');
	const outcome: SessionOutcome = { sessionId, status: 'failed' };
	if (location) {
		outcome.errorUrl = await resolveServiceUrl(this, location);
		if (options.includeErrorMessage) {
			const errorDocument = await fetchServiceUrl.call(this, outcome.errorUrl, itemIndex);
			outcome.errorMessage = String(errorDocument.body ?? '').trim();
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
 * `processing`.
 */
export async function waitForSessions(
	this: ServiceContext,
	sessionIds: string[],
	options: WaitForSessionsOptions,
): Promise<Map<string, SessionOutcome>> {
	const initialDelayMs = Math.max(0, options.initialDelayMs ?? DEFAULT_INITIAL_DELAY_MS);
	const maxDelayMs = Math.max(initialDelayMs, options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS);
	const deadline = Date.now() + Math.max(0, options.timeoutMs);
	const signal = cancelSignal(this);

	const outcomes = new Map<string, SessionOutcome>();
	const failures = new Map<string, number>();
	let pending = [...new Set(sessionIds)];
	let delayMs = 0;
	let firstRound = true;

	while (pending.length > 0) {
		await sleep(Math.min(delayMs, Math.max(0, deadline - Date.now())), signal);
		const stillPending: string[] = [];
		const queue = [...pending];
		let stopped = false;
		const worker = async () => {
			for (let id = queue.shift(); id !== undefined && !stopped; id = queue.shift()) {
				try {
					const outcome = await getSessionOutcome.call(this, id, {
						includeErrorMessage: options.includeErrorMessage,
						customer: options.customer,
					});
					failures.delete(id);
					if (outcome.status === 'processing') stillPending.push(id);
					else outcomes.set(id, outcome);
				} catch (error) {
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

	const result = new Map<string, SessionOutcome>();
	for (const id of new Set(sessionIds)) {
		result.set(id, outcomes.get(id) ?? { sessionId: id, status: 'processing' });
	}
	return result;
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
	for (const [key, value] of Object.entries(headers ?? {})) {
		if (key.toLowerCase() === name) return Array.isArray(value) ? String(value[0]) : String(value);
	}
	return undefined;
}

/** A relative Location is resolved against the credential's base URL, where the request went. */
async function resolveServiceUrl(context: ServiceContext, location: string): Promise<string> {
	if (/^[a-z][a-z0-9+.-]*:/i.test(location)) return location;
	const credentials = await context.getCredentials(CREDENTIAL_NAME);
	return new URL(location, `${checkBaseUrl(credentials.baseUrl)}/`).toString();
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

function cancelSignal(context: ServiceContext): AbortSignal | undefined {
	return 'getExecutionCancelSignal' in context ? context.getExecutionCancelSignal() : undefined;
}

async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
	if (signal?.aborted) throw abortError();
	if (ms <= 0) return;
	await new Promise<void>((resolve, reject) => {
		const onAbort = () => {
			clearTimeout(timer);
			reject(abortError());
		};
		const timer = setTimeout(() => {
			signal?.removeEventListener('abort', onAbort);
			resolve();
		}, ms);
		signal?.addEventListener('abort', onAbort, { once: true });
	});
}

function abortError(): Error {
	const error = new Error('The execution was cancelled while waiting for upload sessions');
	error.name = 'AbortError';
	return error;
}
