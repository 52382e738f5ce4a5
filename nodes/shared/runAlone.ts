import type { IExecuteFunctions, IPollFunctions } from 'n8n-workflow';

import { edition } from './ports';
import { cancelledError, cancelSignal } from './transport';

// One run at a time per node (workflow and node): runs that overlap (a poll that takes longer than
// the poll interval, a schedule that fires while the previous run still waits) would work on the
// same state at once. Within this process a map keeps them apart; across the processes of queue
// mode (main and workers), where the edition can see them, a lease does (./ports: takeLease).
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
	skipped: string;
}

/**
 * Runs `run` unless another run of the node goes on. `run` is handed `lost`, aborted once the run
 * no longer holds its node across processes (its lease ran out: the log says so), so that a run
 * about to write what only one run may write can leave it.
 */
export async function runAlone<T>(
	context: IExecuteFunctions | IPollFunctions,
	options: SkipWhenBusy,
	run: (lost: AbortSignal) => Promise<T>,
): Promise<T | null> {
	const node = `${context.getWorkflow().id ?? ''}\n${context.getNode().id || context.getNode().name}`;
	const busy = (): null => {
		context.logger.debug(options.skipped);
		return null;
	};
	const previous = running.get(node);
	if (previous && previous.until > Date.now()) return busy();
	if (previous && options.deadline) context.logger.warn(options.deadline.stuck);
	const holdMs = options.deadline ? options.deadline.ms + STUCK_RUN_MARGIN_MS : Infinity;
	const mark = { until: Date.now() + holdMs };
	running.set(node, mark);
	try {
		const signal = cancelSignal(context);
		const taking = edition().takeLease({ node, holdMs, signal, logger: context.logger });
		const lease =
			taking &&
			(await taking.catch((error: unknown) => {
				if (signal?.aborted) throw cancelledError(context.getNode(), undefined, signal.reason);
				throw error;
			}));
		if (lease === 'busy') return busy();
		try {
			return await run(lease?.lost ?? new AbortController().signal);
		} finally {
			await lease?.release();
		}
	} finally {
		// A later run may have taken over from this one: its mark stays.
		if (running.get(node) === mark) running.delete(node);
	}
}
