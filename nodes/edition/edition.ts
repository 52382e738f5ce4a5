import { CREDENTIAL_NAME } from '../../credentials/edition';
import { PROCESS_ONLY, type Edition } from '../shared/ports';
import { exchangeDirectly } from '../shared/fullEdition/directExchange';
import { shownProxyOf } from '../shared/fullEdition/proxy';
import { knownImagesInRedis } from '../shared/fullEdition/knownImages';
import { productMemoryInRedis } from '../shared/fullEdition/productMemory';
import { answersInRedis } from '../shared/fullEdition/redisAnswers';
import { takeLeaseInQueueRedis } from '../shared/fullEdition/redisRunLock';
import { limiterFor } from '../shared/fullEdition/sharedRegistry';
import { sharingFor } from '../shared/fullEdition/sharing';
import { digestOf, encodeMultipart } from '../shared/fullEdition/streamedMultipart';

/*
 * The full edition, for self-hosted n8n: what several n8n processes of an account share lives in
 * the Redis of n8n's queue mode or the one the credential names (../shared/fullEdition/), other
 * hosts are reached with Node's own client, multipart bodies are streamed. The verified edition
 * (n8n Cloud) is built with ./edition.verified.ts in its place.
 */
export const EDITION: Edition = {
	...PROCESS_ONLY,
	credentialType: CREDENTIAL_NAME,
	accountLimiter: (accountKey, declaration, credentials, sleep) =>
		limiterFor(accountKey, declaration, sharingFor(credentials), sleep),
	sharedKnownImages: knownImagesInRedis,
	knownImagesAdvice:
		' With Redis (queue mode, or Rate Limit Sharing set to Redis in the credential) they are kept there for every process.',
	productMemory: productMemoryInRedis,
	answerHome: answersInRedis,
	takeLease: takeLeaseInQueueRedis,
	exchangeDirectly,
	proxyOf: shownProxyOf,
	encodeMultipart,
	digestOf,
};
