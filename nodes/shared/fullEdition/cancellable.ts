import { LimiterCancelledError } from '../throttle';

/**
 * Resolves as `work` does, or rejects with LimiterCancelledError (what the transport reads as a
 * cancelled execution) as soon as `signal` aborts: a cancelled execution does not wait for Redis.
 */
export async function unlessCancelled<T>(
	work: Promise<T>,
	signal: AbortSignal | undefined,
): Promise<T> {
	if (!signal) return await work;
	if (signal.aborted) throw new LimiterCancelledError();
	let onAbort: () => void = () => undefined;
	const cancelled = new Promise<never>((_, reject) => {
		onAbort = () => reject(new LimiterCancelledError());
		signal.addEventListener('abort', onAbort, { once: true });
	});
	try {
		return await Promise.race([work, cancelled]);
	} finally {
		signal.removeEventListener('abort', onAbort);
	}
}
