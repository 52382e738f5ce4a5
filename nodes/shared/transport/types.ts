import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	ILoadOptionsFunctions,
	IPollFunctions,
} from 'n8n-workflow';
import type { RequestBody } from '../ports';

/** Where a request can come from: a node run, a trigger's poll, a list in the editor. */
export type ServiceContext = IExecuteFunctions | IPollFunctions | ILoadOptionsFunctions;

export interface CustomerOverride {
	customerId: string;
	customerIdType: 'ServiceID' | 'ExternalID';
}

/** A stream (FormData is one) is sent as it is read. */
export type { RequestBody };

export interface ServiceRequest {
	method: IHttpRequestMethods;
	/** '/api/...' relative to the credential's base URL. */
	path: string;
	qs?: IDataObject;
	/**
	 * Streams (and FormData, which is a stream) are sent as they are read, never buffered, and so
	 * can be sent only once: a request that must be repeated (e.g. after a 429) fails instead.
	 * Pass a function that creates the body (or promises it) to let such a request be repeated.
	 */
	body?: RequestBody | (() => RequestBody | Promise<RequestBody>);
	headers?: IDataObject;
	/** Replaces the credential's customer headers for this call. */
	customer?: CustomerOverride;
	/** Named in errors. */
	itemIndex?: number;
	/** Default 'json': JSON when the body parses as JSON, otherwise the text; empty body = undefined. */
	responseType?: 'json' | 'text' | 'none';
	/** Statuses handed back instead of thrown (e.g. [404], [202, 301]). */
	allowStatus?: number[];
	/** The most of the answer that is read (default 1 MiB); a longer answer fails the request. */
	maxAnswerBytes?: number;
}

/**
 * A request as it goes out to the service's origin, through the account's limiter and with the
 * credential: its absolute URL, the defaults filled in.
 */
export type Exchange = Omit<ServiceRequest, 'path' | 'responseType' | 'allowStatus'> &
	Required<Pick<ServiceRequest, 'responseType' | 'allowStatus'>> & {
		url: string;
		/** An answer longer than maxAnswerBytes is handed back cut (truncated), not failed. */
		truncate?: boolean;
	};

export interface ServiceResponse<T = unknown> {
	statusCode: number;
	headers: Record<string, string>;
	body: T;
	/** Only the beginning of a longer answer was read (when the request allows it). */
	truncated?: boolean;
}
