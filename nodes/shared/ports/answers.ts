/*
 * The answers pollers share as they are kept (see ../sharedAnswers.ts), and the port through which
 * an edition keeps them for every process (the full edition: ../fullEdition/redisAnswers.ts).
 */

/** An answer is never shared longer than this, whatever the pollers' intervals. */
export const MAX_ANSWER_AGE_MS = 60_000;

/** An answer as it is kept: its JSON, when it was asked for, and how long it may be shared. */
export interface KeptAnswer {
	json: string;
	/** When the request that got it was sent (ms since epoch): the answer holds what the service had then. */
	askedAt: number;
	/** Its asker's own bound on its age: the shortest interval among the pollers sharing it. */
	maxAgeMs: number;
	/** The poller that asked (see Freshness.poller). */
	askedBy: string;
}

/** Where the answers are kept for every process of the account (Redis), in the full edition. */
export interface AnswerHome {
	read(key: string): Promise<KeptAnswer | undefined>;
	write(key: string, answer: KeptAnswer): Promise<void>;
}
