/**
 * Documents that arrive XML-encoded as a whole (`&lt;Products&gt;…`), the way a SOAP body carried
 * them. The service's HTTPS routes want the document itself; sent encoded, it fails there with a
 * message about the root element that does not point at the cause.
 */

const ENCODED_LESS_THAN = '&(?:lt|#0*60|#x0*3c);';
/**
 * A document can only begin with '<', after a byte order mark and white space. An encoded '<'
 * followed by what begins markup there is an encoded document and never a well-formed one, so a
 * normal document is never taken for one, whatever escaped text it holds further on.
 */
const ENCODED_DOCUMENT = new RegExp(
	`^\\uFEFF?[ \\t\\r\\n]*${ENCODED_LESS_THAN}[?!A-Za-z_:\\u00C0-\\uFFFF]`,
	'i',
);
/**
 * Inside a document, escaped markup is ordinary text (an HTML description, say); only an escaped
 * XML declaration says that a field holds a whole document.
 */
const ENCODED_DECLARATION = new RegExp(`^[ \\t\\r\\n]*${ENCODED_LESS_THAN}\\?xml[ \\t\\r\\n]`, 'i');

/** What a user does about an encoded document (n8n has no function that decodes XML). */
export const HOW_TO_DECODE =
	'replace &lt; &gt; &quot; &apos; and, last, &amp; with the characters they stand for, e.g. in a Code node';

/** How many bytes of a document's start decide whether it is encoded. */
export const ENCODED_HEAD_BYTES = 256;

/** Whether a document, given by its first bytes at least, is XML-encoded as a whole. */
export function isXmlEncodedDocument(head: Buffer | string): boolean {
	const text =
		typeof head === 'string'
			? head.slice(0, ENCODED_HEAD_BYTES)
			: head.toString('utf8', 0, ENCODED_HEAD_BYTES);
	return ENCODED_DOCUMENT.test(text);
}

/**
 * The path of the first field of an item that holds an XML-encoded document, or null. Walks with
 * an explicit stack: Build From Items takes items of any depth.
 */
export function findXmlEncodedField(json: unknown): string | null {
	const pending: Array<[unknown, string]> = [[json, '']];
	for (let next = pending.pop(); next; next = pending.pop()) {
		const [value, path] = next;
		if (typeof value === 'string') {
			if (ENCODED_DECLARATION.test(value)) return path;
		} else if (Array.isArray(value)) {
			for (let index = value.length - 1; index >= 0; index--)
				pending.push([value[index], `${path}[${index}]`]);
		} else if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
			const entries = Object.entries(value);
			for (let index = entries.length - 1; index >= 0; index--) {
				const [key, field] = entries[index];
				pending.push([field, path ? `${path}.${key}` : key]);
			}
		}
	}
	return null;
}
