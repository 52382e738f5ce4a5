export {
	DEFAULT_TERMS,
	LimiterCancelledError,
	MAX_LIMIT_WAIT_MS,
	type AcquireOptions,
	type BucketTerms,
	type LimiterGrant,
	type LimiterLogger,
	type RateLimiter,
	type ScheduleHandOver,
} from './limiter';
export { GcraLimiter, realClock, SAFETY_MARGIN, type LimiterClock } from './gcra';
// The bucket shared through Redis (./sharedRegistry.ts) is imported from its own module: what is
// exported here makes up the edition without Redis as well.
export { processLimiterFor } from './registry';
export { describeWait, MAX_TIMER_MS, waitWith, type Sleep } from './time';
export { backoffDelay, parseRetryAfter, retryAfterPenalty } from './backoff';
