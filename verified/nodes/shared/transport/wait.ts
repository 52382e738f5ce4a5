import { sleep } from 'n8n-workflow';

import { waitWith } from '../throttle';

/** Waits `ms`, however long, with n8n's cancellable sleep; an aborted signal ends it by rejecting. */
export async function wait(ms: number, signal?: AbortSignal): Promise<void> {
	await waitWith(sleep, ms, signal);
}
