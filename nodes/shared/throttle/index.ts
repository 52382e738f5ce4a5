export {
	DEFAULT_TERMS,
	LimiterCancelledError,
	MAX_LIMIT_WAIT_MS,
	type AcquireOptions,
	type BucketTerms,
	type LimiterGrant,
	type RateLimiter,
	type ScheduleHandOver,
	waitTooLongError,
} from './limiter';
export { GcraLimiter, gcraSpacing, penaltyMs, SAFETY_MARGIN, type LimiterClock } from './gcra';
// The bucket shared through Redis lives in the full edition's own folder (../fullEdition/): what is
// exported here is all either edition meters with in a process.
export {
	MAX_ACCOUNTS,
	processLimiterFor,
	proveHolder,
	touch,
	type TermsDeclaration,
} from './registry';
export { describeWait, waitWith, type Sleep } from './time';
export { backoffDelay, parseRetryAfter, retryAfterPenalty } from './backoff';
export { isLoopbackHost, LOOPBACK_HTTP } from './loopback';
