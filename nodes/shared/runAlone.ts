import type { IExecuteFunctions, IPollFunctions } from 'n8n-workflow';

// One run at a time per node (workflow and node) in this process: runs that overlap (a poll that
// takes longer than the poll interval, a schedule that fires while the previous run still waits)
// would work on the same state at once. Other processes (queue mode's workers) are not seen.
const running = new Map<string, { until: number }>();

/** How long past its deadline a run may still hold the next ones back. */
const STUCK_RUN_MARGIN_MS = 60_000;

interface Alone {
	/**
	 * How long a run may take: one still marked running well past it (a wait that did not end with
	 * it) no longer holds the next runs back, and the log says `stuck`. Without it, a run holds
	 * them back until it ends.
	 */
	deadline?: { ms: number; stuck: string };
}

/** While another run goes on, this one does not happen (null), and the debug log says `skipped`. */
export interface SkipWhenBusy extends Alone {
	whenBusy: 'skip';
	skipped: string;
}

/** While another run goes on, this one fails with `refusal()`. */
export interface RefuseWhenBusy extends Alone {
	whenBusy: 'refuse';
	refusal: () => Error;
}

export async function runAlone<T>(
	context: IExecuteFunctions | IPollFunctions,
	options: SkipWhenBusy,
	run: () => Promise<T>,
): Promise<T | null>;
export async function runAlone<T>(
	context: IExecuteFunctions | IPollFunctions,
	options: RefuseWhenBusy,
	run: () => Promise<T>,
): Promise<T>;
export async function runAlone<T>(
	context: IExecuteFunctions | IPollFunctions,
	options: SkipWhenBusy | RefuseWhenBusy,
	run: () => Promise<T>,
): Promise<T | null> {
	const key = `${context.getWorkflow().id ?? ''}\n${context.getNode().id || context.getNode().name}`;
	const previous = running.get(key);
	if (previous && previous.until > Date.now()) {
		if (options.whenBusy === 'refuse') throw options.refusal();
		context.logger.debug(options.skipped);
		return null;
	}
	if (previous && options.deadline) context.logger.warn(options.deadline.stuck);
	const mark = {
		until: options.deadline ? Date.now() + options.deadline.ms + STUCK_RUN_MARGIN_MS : Infinity,
	};
	running.set(key, mark);
	try {
		return await run();
	} finally {
		// A later run may have taken over from this one: its mark stays.
		if (running.get(key) === mark) running.delete(key);
	}
}
