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
	/**
	 * The value of each key, undefined where the memory holds none; with `seen`, each key is marked
	 * seen in the memory's current night (see closeNight).
	 */
	recall(keys: string[], seen?: boolean): Promise<Array<string | undefined>>;
	/**
	 * Ends the memory's night: forgets every product it holds that was not marked seen since the
	 * night began, answers how many and the values of the first `listed` of them, and begins the
	 * next night.
	 */
	closeNight(listed: number): Promise<{ forgotten: number; values: string[] }>;
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
	/**
	 * Collects products to be sent together with those of other runs (see `take`): each entry's
	 * key must be claimed by `runId` or already collected; its claim passes to the collection until
	 * `untilMs`, and a collected key's staged value is replaced. `documents` says how the collection's
	 * documents are built and sent; a collection that holds products for other `documents` takes
	 * none and answers those. Otherwise answers the keys it did not collect (claimed by another run).
	 */
	collect(
		entries: Array<[key: string, staged: string]>,
		runId: string,
		documents: string,
		untilMs: number,
	): Promise<{ notCollected: Set<string> } | { otherDocuments: string }>;
	/**
	 * Takes `most` collected products, oldest first, for `runId` to send (claimed until `untilMs`),
	 * when at least `least` are collected beside the documents other runs are taking; else
	 * undefined and nothing taken. Each product goes to one taker only, and runs taking at once
	 * never share out a document's worth between them.
	 */
	take(
		runId: string,
		untilMs: number,
		least: number,
		most: number,
	): Promise<{ documents: string; products: Array<[key: string, staged: string]> } | undefined>;
}
