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
export { GcraLimiter, SAFETY_MARGIN, type LimiterClock } from './gcra';
export { limiterFor } from './registry';
export { sharingFor } from './sharing';
export { backoffDelay, parseRetryAfter, retryAfterPenalty } from './backoff';
