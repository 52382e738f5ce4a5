import { XMLBuilder } from 'fast-xml-parser';

import { describeChar, isForbiddenChar, isXmlName } from './chars';

export interface BuildXmlOptions {
	rootElement: string;
	itemElement: string;
	declaration?: boolean;
}

/** A field of an item that cannot become XML, named by its path inside the item. */
export class XmlFieldError extends Error {
	constructor(
		message: string,
		readonly field: string,
	) {
		super(message);
		this.name = 'XmlFieldError';
	}
}

const ATTRIBUTE_PREFIX = '@';
const TEXT_KEY = '#text';

const builder = new XMLBuilder({
	ignoreAttributes: false,
	attributeNamePrefix: ATTRIBUTE_PREFIX,
	textNodeName: TEXT_KEY,
	// In the builder this escapes &, <, > and quotes; nothing is ever expanded.
	processEntities: true,
	suppressBooleanAttributes: false,
	format: true,
	indentBy: '\t',
});

/**
 * Turns the JSON of one item into what the builder writes as one element. Keys starting with '@'
 * become attributes and '#text' the element's text; everything else becomes child elements. Fails
 * with the field's path when a key is no XML name or a value cannot be written as XML.
 */
export function prepareItemForXml(json: unknown, path = ''): unknown {
	if (json === null || json === undefined) return '';
	if (json instanceof Date) return json.toISOString();
	if (typeof json === 'string') {
		for (let i = 0; i < json.length; i++) {
			const c = json.charCodeAt(i);
			if (isForbiddenChar(c)) {
				throw new XmlFieldError(`The field '${path}' holds the character ${describeChar(c)}, which XML cannot carry`, path);
			}
		}
		return json;
	}
	if (typeof json === 'number' || typeof json === 'boolean' || typeof json === 'bigint') return json;
	if (Array.isArray(json)) {
		return json.map((entry, index) => {
			if (Array.isArray(entry)) {
				throw new XmlFieldError(`The field '${path}[${index}]' is a list inside a list, which has no XML form`, path);
			}
			return prepareItemForXml(entry, `${path}[${index}]`);
		});
	}
	if (typeof json === 'object') {
		const prepared: Record<string, unknown> = {};
		for (const [key, value] of Object.entries(json as Record<string, unknown>)) {
			if (value === undefined) continue;
			const fieldPath = path ? `${path}.${key}` : key;
			if (key === TEXT_KEY) {
				if (typeof value === 'object' && value !== null) {
					throw new XmlFieldError(`The field '${fieldPath}' (element text) must be a plain value`, fieldPath);
				}
				prepared[key] = prepareItemForXml(value, fieldPath);
				continue;
			}
			const isAttribute = key.startsWith(ATTRIBUTE_PREFIX);
			const name = isAttribute ? key.slice(ATTRIBUTE_PREFIX.length) : key;
			if (!isXmlName(name)) {
				throw new XmlFieldError(`The field name '${key}' is not a valid XML ${isAttribute ? 'attribute' : 'element'} name`, fieldPath);
			}
			if (isAttribute && typeof value === 'object' && value !== null && !(value instanceof Date)) {
				throw new XmlFieldError(`The field '${fieldPath}' becomes an attribute and must be a plain value`, fieldPath);
			}
			prepared[key] = prepareItemForXml(value, fieldPath);
		}
		return prepared;
	}
	throw new XmlFieldError(`The field '${path}' has a value of type ${typeof json}, which has no XML form`, path);
}

/**
 * One XML document with one `itemElement` per entry, inside `rootElement`. Entries must have been
 * through `prepareItemForXml`.
 */
export function buildXmlDocument(entries: unknown[], options: BuildXmlOptions): string {
	const body = builder.build({ [options.rootElement]: { [options.itemElement]: entries } }) as string;
	return options.declaration ? `<?xml version="1.0" encoding="UTF-8"?>\n${body}` : body;
}
