import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import { KnownImagesWithFallback, type KnownImages } from './memory';
import { getServiceCredentials, type CustomerOverride } from '../transport';
import { hintOncePerRun } from '../transport/runCache';

export type { KnownImages } from './knownImages';

export const DEFAULT_LOOK_UP_AGAIN_DAYS = 7;
/** Ten years: beyond it an age no longer means "in case the service removed it", and Redis refuses such lifetimes. */
export const MAX_LOOK_UP_AGAIN_DAYS = 3650;
const DAY_MS = 24 * 60 * 60 * 1000;

const PROCESS_ONLY_HINT =
	'Known images are remembered in this n8n process only: they are forgotten when n8n restarts and other n8n processes (queue-mode workers) do not see them. With Redis (queue mode, or Rate Limit Sharing set to Redis in the credential) they are kept there for every process.';

/**
 * The known images of the account's customer node that a run works with: in the Redis the account
 * shares its rate limit through, or in this process, which the run's output then says.
 */
export async function knownImagesOf(
	context: IExecuteFunctions,
	itemIndex: number,
	customer: CustomerOverride | undefined,
	lookUpAgainAfterDays: number,
): Promise<KnownImages> {
	if (!(lookUpAgainAfterDays > 0 && lookUpAgainAfterDays <= MAX_LOOK_UP_AGAIN_DAYS)) {
		throw new NodeOperationError(
			context.getNode(),
			`Look Up Again After (Days) of item ${itemIndex} must be a number above 0 and at most ${MAX_LOOK_UP_AGAIN_DAYS}, not ${JSON.stringify(lookUpAgainAfterDays)}`,
			{ itemIndex },
		);
	}
	const credentials = await getServiceCredentials.call(context, itemIndex);
	const known = new KnownImagesWithFallback(credentials, customer, lookUpAgainAfterDays * DAY_MS, (reason) => {
		context.logger.warn('The known images in Redis are unavailable; this process remembers them meanwhile', { reason });
		hintOncePerRun(context, `Redis could not be asked for the known images (${reason}). ${PROCESS_ONLY_HINT}`);
	});
	if (!known.shared) hintOncePerRun(context, PROCESS_ONLY_HINT);
	return known;
}
