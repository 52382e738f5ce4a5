import { takeLeaseInQueueRedis } from '../fullEdition/redisRunLock';
import type { TakeLease } from '../runLease';

/*
 * Where the runs of a node are kept apart across n8n processes, for the full edition: in the Redis
 * of n8n's queue mode, which every main and worker of the instance reaches. The verified edition
 * (n8n Cloud) is built with ./runLockHome.verified.ts in its place: nowhere, so each process
 * keeps only its own runs apart.
 */

export const takeLeaseAcrossProcesses: TakeLease | undefined = takeLeaseInQueueRedis;
