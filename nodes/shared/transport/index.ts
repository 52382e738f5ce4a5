/**
 * The package's way to the service. One request goes: account (credential, base URL, limiter) ->
 * request (limiter, retries, errors) -> http (one exchange through n8n) -> responses/errors.
 */
export type {
	CustomerOverride,
	RequestBody,
	ServiceContext,
	ServiceRequest,
	ServiceResponse,
} from './types';
export { checkBaseUrl } from './baseUrl';
export {
	accountKey,
	customerScope,
	effectiveCustomer,
	getServiceCredentials,
	holderOf,
} from './account';
export { hintOncePerRun, readOncePerRun } from './runCache';
export { bucketTerms } from './settings';
export { AmbiguousUploadError, RefusedLoginError } from './errors';
export {
	cleanServiceText,
	normalizeHeaders,
	parseServiceJson,
	readBytes,
	serviceMessage,
} from './responses';
export { EXTERNAL_ID, SERVICE_ID } from './validate';
export { cancelledError, cancelSignal, sleepOrCancel, withPollDeadline } from './cancel';
export { wait } from './wait';
export { listRequest, serviceRequest } from './request';
export { fetchServiceUrl, resolveServiceUrl } from './serviceUrl';
export { type Allowance, parseAllowance, RefusedUrlError } from './addresses';
export { type ElsewhereAnswer, MAX_REDIRECTS, requestElsewhere } from './elsewhere';
export { ALLOWED_INTERNAL_HOSTS, allowanceFrom } from './allowance';
