import type { IPollFunctions } from 'n8n-workflow';

// Polls of one trigger can overlap when one takes longer than the poll interval (e.g. while the
// rate limit holds its requests back); two polls working on the same state would emit twice. A poll
// ends at its deadline; one still marked running well past it (a wait that did not end with it) no
// longer holds the next polls back.
const running = new Map<string, { until: number }>();

/** How long past its deadline a poll may still hold the next ones back. */
const STUCK_POLL_MARGIN_MS = 60_000;

/**
 * Runs one poll of this trigger unless its previous poll is still running (then null: this poll is
 * skipped). `deadlineMs` is how long the poll may run.
 */
export async function runAlone<T>(
	context: IPollFunctions,
	deadlineMs: number,
	poll: () => Promise<T>,
): Promise<T | null> {
	const key = `${context.getWorkflow().id ?? ''}\n${context.getNode().id || context.getNode().name}`;
	const previous = running.get(key);
	if (previous && previous.until > Date.now()) {
		context.logger.debug('Skipping a poll: the previous poll of this trigger is still running');
		return null;
	}
	if (previous)
		context.logger.warn(
			'The previous poll of this trigger has not ended long after its deadline: polling goes on without it',
		);
	const mark = { until: Date.now() + deadlineMs + STUCK_POLL_MARGIN_MS };
	running.set(key, mark);
	try {
		return await poll();
	} finally {
		// A later poll may have taken over from this one: its mark stays.
		if (running.get(key) === mark) running.delete(key);
	}
}
