import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	type Allowance,
	type ElsewhereAnswer,
	cancelledError,
	cancelSignal,
	cleanServiceText,
	MAX_REDIRECTS,
	readBytes,
	RefusedUrlError,
	requestElsewhere,
} from '../../../shared/transport';
import type { BinaryImage } from './binaryImages';

/*
 * Photos the node fetches itself from the photo host (the shop, a CDN), given by URL: the host is
 * not the service, so the request goes the transport's one way to other hosts (no credential, no
 * customer header; public addresses only, besides what Allowed Internal Hosts names; redirects
 * followed and judged hop by hop), and neither spends nor waits for the account's rate limit. Its
 * size and time are bounded (Max Photo Size, Photo Timeout). A photo is held in memory until its
 * request to the service is sent (at most a request's worth, Max Request Size), never in n8n's
 * binary store.
 */

/** A photo the host takes longer than this to send (headers and body) is not waited for. */
export const DEFAULT_PHOTO_TIMEOUT_SECONDS = 60;
export const DEFAULT_MAX_PHOTO_MEGABYTES = 25;

/** How much of the host a photo may take, and which internal hosts it may come from. */
export interface PhotoBounds {
	maxBytes: number;
	timeoutMs: number;
	allowance: Allowance;
}

/** What an earlier run learnt of the photo at the host: `etag:<ETag>` or `last-modified:<date>`. */
const ETAG = 'etag:';
const LAST_MODIFIED = 'last-modified:';

type PhotoFetch =
	/** The host says the photo has not changed since `knownVersion`. */
	| { notModified: true }
	/** The photo, measured, with its version (the given one, else the host's validator, else ''). */
	| { image: BinaryImage };

function photoError(
	context: IExecuteFunctions,
	itemIndex: number,
	url: string,
	problem: string,
	description?: string,
): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`The photo ${cleanServiceText(url, 200)} of item ${itemIndex} ${problem}`,
		{ itemIndex, ...(description ? { description } : {}) },
	);
}

/** The Photo URL of an item, checked before any request: an http(s) URL. */
export function photoUrlOf(context: IExecuteFunctions, itemIndex: number, value: unknown): string {
	const text = typeof value === 'string' ? value.trim() : '';
	let url: URL | undefined;
	try {
		url = new URL(text);
	} catch {
		url = undefined;
	}
	if (url && (url.username !== '' || url.password !== ''))
		throw new NodeOperationError(
			context.getNode(),
			`The Photo URL of item ${itemIndex} carries a user name or password, which are never sent or shown`,
			{ itemIndex, description: 'Give the photo by a URL without user:password@ before the host.' },
		);
	if (url && (url.protocol === 'https:' || url.protocol === 'http:')) return url.href;
	throw new NodeOperationError(
		context.getNode(),
		`The Photo URL of item ${itemIndex} is not an http(s) URL: ${JSON.stringify(cleanServiceText(String(value ?? ''), 200))}`,
		{ itemIndex },
	);
}

function fileNameOf(url: string): string {
	const last = new URL(url).pathname.split('/').filter(Boolean).pop() ?? 'photo';
	let name: string;
	try {
		name = decodeURIComponent(last);
	} catch {
		name = last;
	}
	return name.replace(/["\\\p{Cc}]/gu, '_') || 'photo';
}

/** A media type as RFC 6838 bounds it (127 characters a name): a longer one is not a type. */
const IMAGE_TYPE = /^image\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}$/;

/**
 * A validator kept only when it is a plain one, as the host sent it: 1 to 200 printable ASCII
 * characters without markup (no < or >). It is given back byte for byte in If-None-Match or
 * If-Modified-Since, so an altered copy would never match (the photo downloaded every night) or be
 * refused as a header (the item failing); and it is shown as the photo's version, where markup from
 * a host has no place.
 */
const PLAIN_VALIDATOR = /^[\x20-\x3b=\x3f-\x7e]{1,200}$/;

/** The photo's request: conditional when an earlier run kept the host's validator and no version is given. */
function photoRequestHeaders(version: string, knownVersion: string): Record<string, string> {
	const headers: Record<string, string> = { accept: 'image/*' };
	if (version === '' && knownVersion.startsWith(ETAG))
		headers['if-none-match'] = knownVersion.slice(ETAG.length);
	if (version === '' && knownVersion.startsWith(LAST_MODIFIED))
		headers['if-modified-since'] = knownVersion.slice(LAST_MODIFIED.length);
	return headers;
}

/** One photo's time at its host, shared by its answer and its body. */
interface PhotoRequest {
	context: IExecuteFunctions;
	itemIndex: number;
	url: string;
	/** Photo Timeout, for this photo alone. */
	timeout: AbortSignal;
	/** Ends the request and the reading of its body: the photo's timeout, or its run's end. */
	deadline: AbortSignal;
	bounds: PhotoBounds;
}

/**
 * Why a photo's request or body ended before it was whole, when its host did not end it: the
 * execution was cancelled, Photo Timeout passed, or its run ended before the photo's turn (no item
 * hears of that one).
 */
function stoppedProblem(photo: PhotoRequest, whatFailed: string, notWithin: string): Error {
	const { context, itemIndex, url, timeout, bounds } = photo;
	const cancel = cancelSignal(context);
	if (cancel?.aborted) return cancelledError(context.getNode(), itemIndex, cancel.reason);
	if (timeout.aborted)
		return photoError(
			context,
			itemIndex,
			url,
			whatFailed,
			`${notWithin} within ${bounds.timeoutMs / 1000} s (Photo Timeout).`,
		);
	return photoError(context, itemIndex, url, `${whatFailed}: the run ended before its turn`);
}

/** The host's answer, or the item's error: refused by address, or no answer in time. */
async function requestPhoto(
	photo: PhotoRequest,
	headers: Record<string, string>,
): Promise<ElsewhereAnswer> {
	const { context, itemIndex, url, deadline, bounds } = photo;
	try {
		return await requestElsewhere(context, {
			url,
			headers,
			signal: deadline,
			allowance: bounds.allowance,
			plainHttp: true,
		});
	} catch (error) {
		if (error instanceof RefusedUrlError)
			throw photoError(
				context,
				itemIndex,
				url,
				`is not fetched: ${error.message}`,
				`Photo URLs reach the public internet only (at most ${MAX_REDIRECTS} redirects, each judged the same). To fetch photos from a host inside your network, name it in Allowed Internal Hosts.`,
			);
		if (deadline.aborted) throw stoppedProblem(photo, 'could not be fetched', 'No answer');
		throw photoError(
			context,
			itemIndex,
			url,
			'could not be fetched',
			cleanServiceText((error as Error).message ?? String(error)),
		);
	}
}

/** The photo's bytes, at most Max Photo Size of them, refused as soon as they are known to be more. */
async function readPhotoBody(photo: PhotoRequest, answer: ElsewhereAnswer): Promise<Buffer> {
	const { context, itemIndex, url, deadline, bounds } = photo;
	const tooLarge = () =>
		photoError(
			context,
			itemIndex,
			url,
			`is larger than Max Photo Size (${bounds.maxBytes} bytes)`,
			'Nothing was uploaded. Raise Max Photo Size (MB) or make the photo smaller.',
		);
	const announced = Number(answer.headers['content-length']);
	if (Number.isFinite(announced) && announced > bounds.maxBytes) {
		answer.body.destroy?.();
		throw tooLarge();
	}
	let read: { bytes: Buffer; truncated: boolean };
	try {
		read = await readBytes(answer.body, bounds.maxBytes);
	} catch (error) {
		if (deadline.aborted) throw stoppedProblem(photo, 'could not be read to its end', 'Not sent');
		throw photoError(
			context,
			itemIndex,
			url,
			'could not be read to its end',
			cleanServiceText((error as Error).message ?? String(error)),
		);
	}
	if (read.truncated) throw tooLarge();
	if (read.bytes.length === 0) throw photoError(context, itemIndex, url, 'is empty');
	return read.bytes;
}

/** What the photo is: its type when the host names a valid image type, its version, its name. */
function photoImage(
	url: string,
	version: string,
	answerHeaders: ElsewhereAnswer['headers'],
	data: Buffer,
): BinaryImage {
	const contentType = (answerHeaders['content-type'] ?? '').split(';')[0].trim();
	const [kind, validator] = answerHeaders.etag
		? [ETAG, answerHeaders.etag]
		: [LAST_MODIFIED, answerHeaders['last-modified'] ?? ''];
	const hostVersion = PLAIN_VALIDATOR.test(validator) ? `${kind}${validator}` : '';
	return {
		binaryProperty: '',
		url,
		version: version !== '' ? version : hostVersion,
		fileName: fileNameOf(url),
		mimeType: IMAGE_TYPE.test(contentType) ? contentType : 'application/octet-stream',
		data,
	};
}

/**
 * Fetches a photo, conditionally when `knownVersion` holds the host's validator from an earlier
 * run (ETag, Last-Modified): an unchanged photo then costs no download. At most `maxBytes` are read.
 * `runEnded` ends the fetch with its run (which includes the execution's cancellation): a photo
 * fetched ahead of its item's turn keeps no connection open once no item will take it.
 */
export async function fetchPhoto(
	context: IExecuteFunctions,
	itemIndex: number,
	url: string,
	version: string,
	knownVersion: string,
	bounds: PhotoBounds,
	runEnded: AbortSignal,
): Promise<PhotoFetch> {
	const timeout = AbortSignal.timeout(bounds.timeoutMs);
	const photo: PhotoRequest = {
		context,
		itemIndex,
		url,
		timeout,
		deadline: AbortSignal.any([runEnded, timeout]),
		bounds,
	};
	const answer = await requestPhoto(photo, photoRequestHeaders(version, knownVersion));
	if (answer.statusCode === 304) {
		answer.body.destroy?.();
		return { notModified: true };
	}
	if (answer.statusCode < 200 || answer.statusCode > 299) {
		answer.body.destroy?.();
		throw photoError(context, itemIndex, url, `could not be fetched (HTTP ${answer.statusCode})`);
	}
	const data = await readPhotoBody(photo, answer);
	return { image: photoImage(url, version, answer.headers, data) };
}
