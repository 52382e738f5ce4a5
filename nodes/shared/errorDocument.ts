import type { IDataObject } from 'n8n-workflow';

import { parseServiceJson } from './transport';

/** What an upload's error document says, as output fields. */
export interface ErrorDocumentFields {
	/** The reason: the document's message when it is JSON that names one, else its text. */
	errorMessage: string;
	/** The document parsed, when it is JSON. */
	errorDocument?: IDataObject | IDataObject[];
	/** The document's text as the service sent it, beside a reason taken out of JSON. */
	errorText?: string;
}

/** Fields of a JSON error document that may hold its reason, most usual first. */
const REASON_FIELDS = ['message', 'Message', 'error', 'detail', 'title', 'errorMessage'];

/**
 * Reads an error document. The spec leaves its format open (the emulator answers JSON with a
 * message and the errors); text is taken as it is, JSON is parsed so a workflow can read the reason
 * and the details as fields. JSON nested too deep to be an item is taken as text.
 */
export function readErrorDocument(body: unknown): ErrorDocumentFields {
	const text = String(body ?? '').trim();
	if (!/^[[{"]/.test(text)) return { errorMessage: text };
	let parsed: unknown;
	try {
		parsed = parseServiceJson(text);
	} catch {
		return { errorMessage: text };
	}
	if (typeof parsed === 'string') return { errorMessage: parsed, errorText: text };
	if (typeof parsed !== 'object' || parsed === null) return { errorMessage: text };
	const object = parsed as IDataObject;
	const reason = Array.isArray(parsed)
		? undefined
		: REASON_FIELDS.map((field) => object[field]).find(
				(value) => typeof value === 'string' && value.trim() !== '',
			);
	return {
		errorMessage: typeof reason === 'string' ? reason.trim() : text,
		errorDocument: parsed as IDataObject | IDataObject[],
		errorText: text,
	};
}
