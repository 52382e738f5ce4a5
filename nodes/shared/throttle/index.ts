export {
	DEFAULT_TERMS,
	LimiterCancelledError,
	MAX_LIMIT_WAIT_MS,
	type AcquireOptions,
	type BucketTerms,
	type LimiterGrant,
	type RateLimiter,
	type ScheduleHandOver,
} from './limiter';
export { GcraLimiter, SAFETY_MARGIN, type LimiterClock } from './gcra';
// The bucket shared through Redis (./sharedRegistry.ts, ./redisBucket.ts) is imported from its own
// modules: what is exported here makes up the edition without Redis as well.
export { processLimiterFor } from './registry';
export { describeWait, waitWith, type Sleep } from './time';
export { backoffDelay, parseRetryAfter, retryAfterPenalty } from './backoff';
