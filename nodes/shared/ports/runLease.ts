import type { Logger } from 'n8n-workflow';

/*
 * What keeps the runs of one node apart across the n8n processes of an instance (queue mode's
 * main and workers), whichever edition provides it (the full edition: ../fullEdition/redisRunLock.ts).
 */

/** A run's hold on its node, seen by every n8n process of the instance. */
export interface RunLease {
	/**
	 * Aborted once the run no longer holds its node (the n8n log says why): another process may
	 * start a run of it meanwhile.
	 */
	readonly lost: AbortSignal;
	/** Lets the node go for the next run; never fails. */
	release(): Promise<void>;
}

export interface LeaseRequest {
	/** The node: its workflow and node ids (named in the shared store only by a digest). */
	node: string;
	/** How long the run may hold it at most: a run that has not ended by then lets it go. */
	holdMs: number;
	/** Ends a wait for the store at once. */
	signal?: AbortSignal;
	logger: Logger;
}

/**
 * Takes the node for one run: its lease, 'busy' while a run in another process holds it, or
 * undefined when the processes cannot be asked (each keeps its own runs apart: the log says why).
 * Undefined at once, not a promise, where there is nothing to ask (outside queue mode): the run
 * then starts without waiting for anything.
 */
export type TakeLease = (
	request: LeaseRequest,
) => Promise<RunLease | 'busy' | undefined> | undefined;
