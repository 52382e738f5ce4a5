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
export { limiterFor, type SharingDecision } from './registry';
export type { RedisConnection } from './redisBucket';
export { describeWait, waitWith, type Sleep } from './time';
export { backoffDelay, parseRetryAfter, retryAfterPenalty } from './backoff';
