import type { IDataObject } from 'n8n-workflow';

/** A request's body as the transport sends it: whole, or a stream read as it is sent. */
export type RequestBody = Buffer | string | NodeJS.ReadableStream;

/** One file of a multipart/form-data body: its part's header fields and how to read its bytes. */
export interface FilePart {
	/** The form field it is sent as. */
	name: string;
	filename: string;
	/** A media type (checked by the caller): it goes into the part's header as it is. */
	contentType: string;
	/** Byte length when known before reading. */
	size?: number;
	/** The bytes, whole. */
	read(): Promise<Buffer>;
	/** The bytes as a stream, for data n8n keeps in its binary store rather than in the item. */
	open?(): Promise<NodeJS.ReadableStream>;
}

/** What was sent of one part. */
export interface PartDigest {
	md5: string;
	bytes: number;
}

/** A multipart body for one request, handed to every attempt (e.g. after a refusal, 429) as a body that can be sent. */
export interface MultipartUpload {
	/** Headers the request needs for this body. */
	headers: IDataObject;
	/** The body of one attempt. */
	body(): Promise<RequestBody>;
	/** Per part, in order: what the last attempt sent; undefined where not measured while sending (a part not read to its end). */
	digests(): Array<PartDigest | undefined>;
	/** Releases what the last attempt holds open. */
	close(): void;
}

/**
 * A part's Content-Type goes into its header as it is: a control character there (a line break, NUL,
 * VT) would add header lines or cut the header. Item data is checked, naming the item, before this;
 * the encoders refuse what still holds one.
 */
export function checkPartContentType(part: FilePart): void {
	if (/\p{Cc}/u.test(part.contentType))
		throw new Error(`The content type of ${part.filename} holds control characters`);
}
