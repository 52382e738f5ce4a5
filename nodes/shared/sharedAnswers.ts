import { edition, MAX_ANSWER_AGE_MS, type KeptAnswer } from './ports';
import {
	cancelledError,
	cancelSignal,
	customerScope,
	getServiceCredentials,
	wait,
	type CustomerOverride,
	type ServiceContext,
} from './transport';

/**
 * Answers of the service that several pollers of one account and customer node would otherwise
 * each ask for (the day's listing, a session's status): the first poller asks, the others take its
 * answer while it is fresh enough (an answer that will soon be out of date, such as "still
 * processing", only briefly). Kept in this process, and in the full edition also in the Redis
 * the account shares its rate limit through (the edition's answerHome, ./ports), so that every n8n main
 * shares them.
 *
 * Keyed by customerScope: only a credential holding the account's password finds an answer, and
 * each customer node has its own.
 */

/** Answers larger than this (as JSON) are not kept: the poller that asked uses it alone. */
const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
/** Answers this process keeps at most, and their size (JSON), for all accounts together; the oldest go first. */
const MAX_PROCESS_ANSWERS = 500;
const MAX_PROCESS_BYTES = 16 * 1024 * 1024;
/** A poller waits at most this long for another's request to the same answer, then asks itself. */
const FLIGHT_WAIT_MS = 60_000;

/**
 * What a poller accepts: another poller's answer, asked no earlier than `notBefore`, and younger
 * than `maxAgeMs`. Its own answers it never takes back: what it asked for itself it has taken in
 * already, or lost with a poll whose memory was not saved.
 */
export interface Freshness {
	notBefore: number;
	maxAgeMs: number;
	/** Names the poller (a trigger: the random id its memory keeps). */
	poller: string;
}

/** A shared answer and when it was asked for. */
export interface SharedAnswer<T> {
	value: T;
	askedAt: number;
}

const processAnswers = new Map<string, KeptAnswer>();
const flights = new Map<string, Omit<KeptAnswer, 'json'> & { answer: Promise<KeptAnswer> }>();

function accepts(
	answer: Omit<KeptAnswer, 'json'>,
	freshness: Freshness,
	now = answer.askedAt,
): boolean {
	const maxAgeMs = Math.min(MAX_ANSWER_AGE_MS, freshness.maxAgeMs, answer.maxAgeMs);
	return (
		answer.askedBy !== freshness.poller &&
		answer.askedAt >= freshness.notBefore &&
		now - answer.askedAt < maxAgeMs
	);
}

let processBytes = 0;

function forgetInProcess(key: string): void {
	processBytes -= processAnswers.get(key)?.json.length ?? 0;
	processAnswers.delete(key);
}

function keepInProcess(key: string, answer: KeptAnswer): void {
	forgetInProcess(key);
	processAnswers.set(key, answer);
	processBytes += answer.json.length;
	const now = Date.now();
	for (const [other, kept] of processAnswers) {
		const tooMany = processAnswers.size > MAX_PROCESS_ANSWERS || processBytes > MAX_PROCESS_BYTES;
		if (!tooMany && now - kept.askedAt < MAX_ANSWER_AGE_MS) break;
		forgetInProcess(other);
	}
}

/** Waits for another poller's request, within FLIGHT_WAIT_MS and this poll's own cancel signal; undefined when it failed or took too long. */
async function joinFlight(
	answer: Promise<KeptAnswer>,
	signal: AbortSignal | undefined,
): Promise<KeptAnswer | undefined> {
	const done = new AbortController();
	const timeout = wait(
		FLIGHT_WAIT_MS,
		signal ? AbortSignal.any([signal, done.signal]) : done.signal,
	).then(
		() => undefined,
		() => undefined,
	);
	try {
		return await Promise.race([answer.catch(() => undefined), timeout]);
	} finally {
		done.abort();
	}
}

/**
 * The answer named by `what` (e.g. the listing of a date) for the account and customer node of the
 * context's credential: one kept in this process when it is fresh enough, else the answer of a
 * request of another poller of this process already under way, else (full edition) one kept in
 * Redis, else `ask`'s, which is then kept for the others. Each caller gets its own copy. A failed
 * request is not kept; Redis that cannot be asked costs the sharing across processes, never the
 * answer.
 */
export async function sharedAnswer<T>(
	context: ServiceContext,
	customer: CustomerOverride | undefined,
	what: string[],
	freshness: Freshness,
	ask: () => Promise<T>,
	sharedForMs: (value: T) => number = () => MAX_ANSWER_AGE_MS,
): Promise<SharedAnswer<T>> {
	const credentials = await getServiceCredentials(context);
	const key = customerScope(credentials, customer, ...what);
	const kept = processAnswers.get(key);
	if (kept && accepts(kept, freshness, Date.now()))
		return { value: JSON.parse(kept.json) as T, askedAt: kept.askedAt };
	const underWay = flights.get(key);
	if (underWay && accepts(underWay, freshness)) {
		const signal = cancelSignal(context);
		const joined = await joinFlight(underWay.answer, signal);
		if (joined && accepts(joined, freshness, Date.now()))
			return { value: JSON.parse(joined.json) as T, askedAt: joined.askedAt };
		// A poll stopped while it waited asks nothing: a flight of its own would only fail.
		if (signal?.aborted) throw cancelledError(context.getNode(), undefined, signal.reason);
	}

	// Looked for and registered without a wait in between: polls that miss at once share this one.
	const flight = {
		askedAt: Date.now(),
		maxAgeMs: Math.min(MAX_ANSWER_AGE_MS, freshness.maxAgeMs),
		askedBy: freshness.poller,
	};
	const answer = answerOf(context, key, freshness, flight, ask, sharedForMs);
	flights.set(key, { ...flight, answer });
	try {
		const kept = await answer;
		return { value: JSON.parse(kept.json) as T, askedAt: kept.askedAt };
	} finally {
		if (flights.get(key)?.answer === answer) flights.delete(key);
	}
}

/**
 * The answer kept in Redis (full edition) if `freshness` accepts it, else `ask`'s, kept for the
 * others (no longer than `sharedForMs` says for its value): in this process at once, in Redis as
 * soon as its write gets there.
 */
async function answerOf<T>(
	context: ServiceContext,
	key: string,
	freshness: Freshness,
	flight: Omit<KeptAnswer, 'json'>,
	ask: () => Promise<T>,
	sharedForMs: (value: T) => number,
): Promise<KeptAnswer> {
	const home = edition().answerHome(await getServiceCredentials(context));
	const shared = await home?.read(key).catch((error: Error) => {
		context.logger.debug(`Redis could not be asked for a shared answer: ${error.message}`);
		return undefined;
	});
	if (shared && accepts(shared, freshness, Date.now())) {
		keepInProcess(key, shared);
		return shared;
	}
	const value = await ask();
	const kept = {
		...flight,
		maxAgeMs: Math.min(flight.maxAgeMs, sharedForMs(value)),
		json: JSON.stringify(value) ?? 'null',
	};
	if (kept.json.length > MAX_ANSWER_BYTES) return kept;
	keepInProcess(key, kept);
	// Handed out at once: the write finishes on its own, within the connection's time limits, and
	// a failed one leaves Redis alone for a while (./fullEdition/redisAnswers.ts).
	void home?.write(key, kept).catch((error: Error) => {
		context.logger.debug(`An answer could not be shared through Redis: ${error.message}`);
	});
	return kept;
}
