import type { TakeLease } from '../runLease';

/*
 * Where the runs of a node are kept apart across n8n processes, for the verified edition (n8n
 * Cloud), built in place of ./runLockHome.ts: nowhere, since n8n's rules for verified packages
 * allow no Redis client. Each n8n process keeps its own runs apart; a run in another process of
 * the same instance (queue mode's workers) is not seen.
 */

export const takeLeaseAcrossProcesses: TakeLease | undefined = undefined;
