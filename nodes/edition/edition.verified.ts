import { CREDENTIAL_NAME } from '../../credentials/edition';
import { PROCESS_ONLY, type Edition } from '../shared/ports';

/*
 * The verified edition (n8n Cloud), built in place of ./edition.ts: n8n's rules for verified
 * packages allow no Redis client, no Node client of a package's own and no `stream`, so it is an
 * n8n process on its own. Each process meters its own requests (the adaptive limiter answers other
 * processes' refusals, 429, by slowing down, never by failing), keeps its known images, pollers'
 * answers and runs to itself, reaches other hosts through n8n's egress filter and request helper,
 * and builds multipart bodies in memory.
 */
export const EDITION: Edition = { ...PROCESS_ONLY, credentialType: CREDENTIAL_NAME };
