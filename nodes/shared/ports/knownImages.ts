/**
 * The images an account's customer node already has, by md5: what the image upload learnt from the
 * service (an upload's answer, a lookup), so that an image it knows costs no request. The service
 * never changes the hashcode of an image it has, but it may remove images: an entry is trusted for
 * a given age only, then the image is looked up or uploaded again.
 *
 * Where it lives: in the full edition, in the Redis the account shares its rate limit through,
 * when there is one, so that every n8n process of the account (queue-mode workers, several mains)
 * shares it and it outlives restarts; otherwise, and always in the verified edition, in this
 * process only (../knownImages/memory.ts). Never in the workflow's static data: n8n
 * saves that as one object after each execution, and a copy written by this node could overwrite
 * the trigger's newer state.
 */
export interface KnownImages {
	/** Whether what is remembered outlives this process and is seen by every process of the account. */
	readonly shared: boolean;
	/** Hashcodes of the md5s that are known and not older than the age; unknown ones are absent. */
	recall(md5s: string[]): Promise<Map<string, string>>;
	remember(entries: Array<{ md5: string; hashcode: string }>): Promise<void>;
	/** Forgets every image of the account's customer node; how many were known. */
	forget(): Promise<number>;
}
