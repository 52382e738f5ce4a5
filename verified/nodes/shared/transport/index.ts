/**
 * The package's way to the service. One request goes: account (credential, base URL, limiter) ->
 * request (limiter, retries, errors) -> http (one exchange through n8n) -> responses/errors.
 */
export type { CustomerOverride, RequestBody, ServiceContext, ServiceRequest, ServiceResponse } from './types';
export { checkBaseUrl } from './baseUrl';
export { accountKey, bucketTerms, effectiveCustomer, getServiceCredentials } from './account';
export { CREDENTIAL_NAME } from './edition';
export { isAmbiguous } from './errors';
export { EXTERNAL_ID, SERVICE_ID } from './validate';
export { cancelledError, cancelSignal, sleepOrCancel, withPollDeadline } from './cancel';
export {
	fetchServiceUrl,
	listRequest,
	MAX_FAILURE_ATTEMPTS,
	MAX_RATE_LIMIT_ATTEMPTS,
	resolveServiceUrl,
	serviceRequest,
} from './request';
