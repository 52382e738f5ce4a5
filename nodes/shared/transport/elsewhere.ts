import { exchangeElsewhere, type EgressAnswer } from './egressExchange';
import {
	addressBits,
	allowsHost,
	type Allowance,
	nameRefusal,
	refusalOf,
	RefusedUrlError,
} from './addresses';
import { normalizeHeaders } from './responses';
import type { ServiceContext } from './types';

/*
 * The package's one way to hosts other than the service: a URL that comes from the data (a photo)
 * or from whoever answers as the service (an error document on another host). It never carries the
 * credential, the Authorization header or a customer header; it reaches only the public internet
 * and what the node's allowance names, judged on the address each connection goes to, for the first
 * request and every redirect it follows itself.
 */

/** Redirects followed, each judged as the first request: enough for a CDN's hops, not a loop. */
export const MAX_REDIRECTS = 5;

const REDIRECTS = [301, 302, 303, 307, 308];

export interface ElsewhereRequest {
	url: string;
	/** Only what any host may see (Accept, conditional headers): sent on every hop. */
	headers: Record<string, string>;
	/** Ends the request, its redirects and the reading of the answer. */
	signal: AbortSignal;
	/** The internal hosts and networks the node lets this URL reach. */
	allowance: Allowance;
	/** Plain http allowed besides https (to any host, else to hosts the allowance names only). */
	plainHttp: boolean;
}

export interface ElsewhereAnswer extends Omit<EgressAnswer, 'headers'> {
	headers: Record<string, string>;
}

function refuse(reason: string): never {
	throw new RefusedUrlError(reason);
}

/** One hop, judged before any byte is sent: its scheme, its userinfo, its address. */
async function hop(
	context: ServiceContext,
	request: ElsewhereRequest,
	url: URL,
): Promise<EgressAnswer> {
	const plainHttp = request.plainHttp || allowsHost(request.allowance, url);
	if (url.protocol !== 'https:' && !(plainHttp && url.protocol === 'http:'))
		refuse(plainHttp ? 'it is not an http(s) URL' : 'it is not an https URL');
	if (url.username !== '' || url.password !== '')
		refuse('it carries a user name or password, which are never sent');
	const literal = addressBits(url.hostname) !== undefined;
	const named = allowsHost(request.allowance, url);
	const admit = (address: string) => {
		const reason = refusalOf(request.allowance, url, address);
		// Where a name leads is not said: a name without an address reads the same.
		if (reason) refuse(literal ? reason : nameRefusal(url.hostname));
	};
	// A connection to an IP address looks nothing up: the address is judged here.
	if (literal) admit(url.hostname);
	return await exchangeElsewhere(context, {
		url,
		headers: request.headers,
		signal: request.signal,
		named,
		admit,
		refuse,
		// A host the node names is the user's own: its resolver's words are kept.
		unresolved: (error) => (named ? error : new RefusedUrlError(nameRefusal(url.hostname))),
	});
}

/**
 * GETs a URL on another host, following up to MAX_REDIRECTS redirects, each hop judged as the first.
 * A URL or hop refused throws RefusedUrlError before anything is sent to it; other failures (no
 * answer, the signal) are thrown as they come. The answer's body is left to the caller to read.
 */
export async function requestElsewhere(
	context: ServiceContext,
	request: ElsewhereRequest,
): Promise<ElsewhereAnswer> {
	let url = new URL(request.url);
	for (let redirects = 0; ; redirects++) {
		const answer = await hop(context, request, url);
		const headers = normalizeHeaders(answer.headers);
		if (!REDIRECTS.includes(answer.statusCode) || headers.location === undefined)
			return { ...answer, headers };
		answer.body.destroy?.();
		if (redirects === MAX_REDIRECTS) refuse(`it redirects more than ${MAX_REDIRECTS} times`);
		if (!URL.canParse(headers.location, url.href)) refuse('it redirects to an invalid URL');
		url = new URL(headers.location, url);
	}
}
