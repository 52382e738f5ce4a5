import { NodeOperationError, type IExecuteFunctions } from 'n8n-workflow';

import { KnownImagesWithFallback, type KnownImages } from './memory';
import { getServiceCredentials, type CustomerOverride } from '../transport';
import { hintOncePerRun } from '../transport';
import { edition } from '../ports';
import { DAY_MS } from '../time';

export type { KnownImages } from '../ports';

export const DEFAULT_LOOK_UP_AGAIN_DAYS = 7;
/** About a quarter of an hour: a shorter age would remember nothing worth a write. */
export const MIN_LOOK_UP_AGAIN_DAYS = 0.01;
/** A year: beyond it an age no longer means "in case the service removed it", and the memory would only grow. */
export const MAX_LOOK_UP_AGAIN_DAYS = 365;

/** What a run that remembers its known images in this process only is told. */
const processOnlyHint = (): string =>
	`Known images are remembered in this n8n process only: they are forgotten when n8n restarts and other n8n processes (queue-mode workers) do not see them, and every image is then sent again.${edition().knownImagesAdvice} A workflow can keep its own memory that outlives restarts: store each output item's md5 and hashcode (e.g. in a Data Table) and give them back as Known MD5 and Known Hashcode.`;

/**
 * The known images of the account's customer node that a run works with: in the full edition, in
 * the Redis the account shares its rate limit through where it has one; otherwise (and always in the
 * verified edition) in this process, which the run's output then says.
 */
export async function knownImagesOf(
	context: IExecuteFunctions,
	itemIndex: number,
	customer: CustomerOverride | undefined,
	lookUpAgainAfterDays: number,
): Promise<KnownImages> {
	// The field's bounds bind typed values only: an expression can give any number.
	if (
		!(
			lookUpAgainAfterDays >= MIN_LOOK_UP_AGAIN_DAYS &&
			lookUpAgainAfterDays <= MAX_LOOK_UP_AGAIN_DAYS
		)
	) {
		throw new NodeOperationError(
			context.getNode(),
			`Look Up Again After (Days) of item ${itemIndex} must be a number from ${MIN_LOOK_UP_AGAIN_DAYS} to ${MAX_LOOK_UP_AGAIN_DAYS}, not ${JSON.stringify(lookUpAgainAfterDays)}`,
			{ itemIndex },
		);
	}
	const credentials = await getServiceCredentials(context, itemIndex);
	const known = new KnownImagesWithFallback(
		credentials,
		customer,
		lookUpAgainAfterDays * DAY_MS,
		(reason) => {
			context.logger.warn(
				'The known images in Redis are unavailable; this process remembers them meanwhile',
				{ reason },
			);
			hintOncePerRun(
				context,
				`Redis could not be asked for the known images (${reason}). ${processOnlyHint()}`,
			);
		},
	);
	if (!known.shared) hintOncePerRun(context, processOnlyHint());
	return known;
}
