/** After Redis could not be asked, how long its users leave it alone before they ask it again. */
const RETRY_AFTER_MS = 5000;

/**
 * When Redis may be asked again after it failed: not for 5 s, so that a Redis that is away (each
 * attempt may take the connect timeout of 3 s or the command timeout of 2 s) holds up no request,
 * poll or run that comes meanwhile; each user goes on without it in that time.
 */
export class RedisBackOff {
	private retryAt = 0;

	constructor(private readonly now: () => number = () => Date.now()) {}

	/** Whether Redis may be asked now: it has not failed within the last 5 s. */
	get due(): boolean {
		return this.now() >= this.retryAt;
	}

	/** Redis could not be asked: it is left alone for a while. */
	failed(): void {
		this.retryAt = this.now() + RETRY_AFTER_MS;
	}
}
