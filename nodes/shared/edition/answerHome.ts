import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { RedisAnswers } from '../fullEdition/redisAnswers';
import { sharingFor } from '../fullEdition/sharing';
import type { SharedAnswerHome } from '../keptAnswers';

/*
 * Where the pollers' shared answers are kept for every process, for the full edition: the Redis
 * the account shares its rate limit through (queue mode, or Rate Limit Sharing set to Redis). The
 * verified edition (n8n Cloud) is built with ./answerHome.verified.ts in its place: nowhere, so
 * each process shares within itself.
 */
export const sharedAnswerHome: SharedAnswerHome | undefined = (
	credentials: ICredentialDataDecryptedObject,
) => {
	const { connection } = sharingFor(credentials);
	return connection ? new RedisAnswers(connection) : undefined;
};
