/**
 * A memory per product for Only Changed Products when each run holds part of the catalogue (a page,
 * a delta feed's run): what the service confirmed of each product, looked up and written product by
 * product, so that a run costs time in its own products, never in the catalogue's. Shared by every
 * process of the account's n8n and outliving restarts, or not offered at all: a memory of one
 * process would make another process send everything again, or, worse, take as confirmed what it
 * never saw confirmed.
 *
 * Keys are digests that only the password's holder can form (see the transport's holderKey);
 * values are what the run wants to find again (a content digest, or that a session failed).
 */
export interface ProductMemory {
	/** How many products the memory keeps at most; a run that would pass it is refused. */
	readonly bound: number;
	/** The value of each key, undefined where the memory holds none. */
	recall(keys: string[]): Promise<Array<string | undefined>>;
	/**
	 * Claims `keys` for the run `runId` until `untilMs`: while claimed, another run's claim of the
	 * same key is refused. Answers the keys another run holds (none claimed of them), or `full`
	 * when remembering the new keys among them would pass the bound (nothing claimed).
	 */
	claim(keys: string[], runId: string, untilMs: number): Promise<{ taken: Set<string> } | 'full'>;
	/**
	 * Writes each entry whose key this run still claims and lets go of every claim of the run among
	 * `released`; answers how many entries were written (a claim that ran out is not written).
	 */
	remember(
		entries: Array<[key: string, value: string]>,
		runId: string,
		released: string[],
	): Promise<number>;
}
