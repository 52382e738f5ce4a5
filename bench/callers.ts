import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { serviceRequest } from '../nodes/shared/transport';
import { createContext } from '../scripts/n8n/in-process';

/**
 * Sends `requests` GET /api/auth/me through the transport from `callers` concurrent callers, each
 * its own node run with its own context, as separate executions are; how many of them failed.
 */
export async function sendFromCallers(
	credentials: ICredentialDataDecryptedObject,
	requests: number,
	callers: number,
): Promise<number> {
	let next = 0;
	let failed = 0;
	const caller = async () => {
		const context = createContext({ credentials });
		while (next < requests) {
			next++;
			try {
				await serviceRequest(context, { method: 'GET', path: '/api/auth/me' });
			} catch {
				failed++;
			}
		}
	};
	await Promise.all(Array.from({ length: callers }, caller));
	return failed;
}
