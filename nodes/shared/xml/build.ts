import { describeChar, isXmlChar, isXmlName } from './chars';

export interface BuildXmlOptions {
	rootElement: string;
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

/** One item written as its XML element, ready to go into a document. */
export interface PreparedItem {
	xml: string;
}

const ATTRIBUTE_PREFIX = '@';
const MAX_INDENTED_DEPTH = 32;
const TEXT_KEY = '#text';
// Control characters as a Unicode category (the C0 ones XML refuses, and C1 ones it allows, which the
// careful path below lets through): n8n's lint for Cloud refuses control characters in a pattern.
const NEEDS_ESCAPE_OR_CHECK = /[&<>"\p{Cc}\uD800-\uDFFF\uFFFE\uFFFF]/u;
const TEXT_ESCAPES: Record<string, string> = {
	'&': '&amp;',
	'<': '&lt;',
	'>': '&gt;',
	'\r': '&#13;',
};
// In attribute values a parser turns raw tab, line feed and carriage return into spaces.
const ATTRIBUTE_ESCAPES: Record<string, string> = {
	...TEXT_ESCAPES,
	'"': '&quot;',
	'\t': '&#9;',
	'\n': '&#10;',
};

/** Prefixes in scope: 'xml' always; others from xmlns:prefix attributes of the element or above. */
type Scope = ReadonlySet<string>;
const ITEM_SCOPE: Scope = new Set(['xml']);

/** Work still to do, last in first out: an element to write, or the end of one. */
type Task =
	| { element: string; value: unknown; path: string; depth: number; scope: Scope; compact: boolean }
	| { close: string; object: object };

/**
 * Writes the JSON of one item as one `itemElement`: keys starting with '@' become attributes,
 * '#text' the element's text, anything else child elements (a list repeats its element). Refuses,
 * with the field's path, what XML cannot carry faithfully: a key that is no XML name, a namespace
 * prefix no xmlns attribute declares, characters XML does not allow, lone surrogates, lists
 * inside lists. Odd keys such as `__proto__` are written like any other. Works through an
 * explicit stack, so any depth is fine.
 */
export function prepareItemForXml(json: unknown, itemElement: string): PreparedItem {
	const out: string[] = [];
	const open = new Set<object>();
	const tasks: Task[] = [
		{ element: itemElement, value: json, path: '', depth: 1, scope: ITEM_SCOPE, compact: false },
	];
	for (let task = tasks.pop(); task; task = tasks.pop()) {
		if ('close' in task) {
			out.push(task.close);
			open.delete(task.object);
		} else {
			writeElement(task, out, tasks, open);
		}
	}
	return { xml: out.join('') };
}

/** One XML document with the prepared items inside `rootElement`, one element per line, tab-indented. */
export function buildXmlDocument(items: PreparedItem[], options: BuildXmlOptions): string {
	const declaration = options.declaration ? '<?xml version="1.0" encoding="UTF-8"?>\n' : '';
	const { rootElement } = options;
	return `${declaration}<${rootElement}>\n${items.map((item) => item.xml).join('')}</${rootElement}>\n`;
}

function writeElement(
	task: Extract<Task, { element: string }>,
	out: string[],
	tasks: Task[],
	open: Set<object>,
): void {
	const { element, value, path, depth, compact } = task;
	const indent = compact ? '' : '\t'.repeat(depth);
	const lineEnd = compact ? '' : '\n';
	if (typeof value !== 'object' || value === null || value instanceof Date) {
		const text = value === null ? '' : escape(plainValue(value, path), TEXT_ESCAPES, path);
		checkPrefix(element, task.scope, path, 'element');
		out.push(`${indent}<${element}>${text}</${element}>${lineEnd}`);
		return;
	}
	if (Array.isArray(value))
		throw new XmlFieldError(
			`The field '${path}' is a list inside a list, which has no XML form`,
			path,
		);
	if (open.has(value))
		throw new XmlFieldError(`The field '${path}' contains itself, which has no XML form`, path);

	let attributes = '';
	let text = '';
	let scope = task.scope;
	const children: Array<[string, unknown, string]> = [];
	const fields = Object.entries(value as Record<string, unknown>);
	for (const [key, field] of fields) {
		if (key.startsWith('@xmlns:') && field !== undefined) {
			if (scope === task.scope) scope = new Set(scope);
			(scope as Set<string>).add(key.slice(7));
		}
	}
	for (const [key, field] of fields) {
		if (field === undefined) continue;
		const fieldPath = join(path, key);
		if (key === TEXT_KEY) {
			if (typeof field === 'object' && field !== null && !(field instanceof Date)) {
				throw new XmlFieldError(
					`The field '${fieldPath}' (element text) must be a plain value`,
					fieldPath,
				);
			}
			text = field === null ? '' : escape(plainValue(field, fieldPath), TEXT_ESCAPES, fieldPath);
			continue;
		}
		if (key.startsWith(ATTRIBUTE_PREFIX)) {
			const name = key.slice(ATTRIBUTE_PREFIX.length);
			checkName(name, key, fieldPath, 'attribute');
			if (typeof field === 'object' && field !== null && !(field instanceof Date)) {
				throw new XmlFieldError(
					`The field '${fieldPath}' becomes an attribute and must be a plain value`,
					fieldPath,
				);
			}
			const attributeValue =
				field === null ? '' : escape(plainValue(field, fieldPath), ATTRIBUTE_ESCAPES, fieldPath);
			if (name.startsWith('xmlns:') && attributeValue === '') {
				throw new XmlFieldError(
					`The field '${fieldPath}' declares a namespace prefix with an empty name, which XML does not allow`,
					fieldPath,
				);
			}
			if (name !== 'xmlns' && !name.startsWith('xmlns:'))
				checkPrefix(name, scope, fieldPath, 'attribute');
			attributes += ` ${name}="${attributeValue}"`;
			continue;
		}
		checkName(key, key, fieldPath, 'element');
		children.push([key, field, fieldPath]);
	}
	checkPrefix(element, scope, path, 'element');

	if (children.length === 0) {
		out.push(`${indent}<${element}${attributes}>${text}</${element}>${lineEnd}`);
		return;
	}
	// Text next to child elements: indentation would become part of the text, so none inside.
	// Deep down, indentation would outgrow the data: none there either.
	const childrenCompact = compact || text !== '' || depth >= MAX_INDENTED_DEPTH;
	out.push(`${indent}<${element}${attributes}>${text}${childrenCompact ? '' : '\n'}`);
	open.add(value);
	tasks.push({ close: `${childrenCompact ? '' : indent}</${element}>${lineEnd}`, object: value });
	for (let k = children.length - 1; k >= 0; k--) {
		const [key, field, fieldPath] = children[k];
		const entries = Array.isArray(field) ? field : [field];
		for (let index = entries.length - 1; index >= 0; index--) {
			const entry = entries[index];
			if (entry === undefined) continue;
			if (Array.isArray(entry))
				throw new XmlFieldError(
					`The field '${fieldPath}[${index}]' is a list inside a list, which has no XML form`,
					fieldPath,
				);
			const entryPath = Array.isArray(field) ? `${fieldPath}[${index}]` : fieldPath;
			tasks.push({
				element: key,
				value: entry,
				path: entryPath,
				depth: depth + 1,
				scope,
				compact: childrenCompact,
			});
		}
	}
}

function join(path: string, key: string): string {
	return path ? `${path}.${key}` : key;
}

function checkName(name: string, key: string, path: string, kind: 'element' | 'attribute'): void {
	const parts = name.split(':');
	const qualified = parts.length <= 2 && parts.every((part) => isXmlName(part));
	if (!qualified)
		throw new XmlFieldError(`The field name '${key}' is not a valid XML ${kind} name`, path);
	if (kind === 'element' && parts.length === 2 && parts[0] === 'xmlns') {
		throw new XmlFieldError(
			`The field name '${key}' uses the prefix 'xmlns', which only namespace declarations may use`,
			path,
		);
	}
}

function checkPrefix(
	name: string,
	scope: Scope,
	path: string,
	kind: 'element' | 'attribute',
): void {
	const colon = name.indexOf(':');
	if (colon < 0) return;
	const prefix = name.slice(0, colon);
	if (!scope.has(prefix)) {
		throw new XmlFieldError(
			`The ${kind} '${name}' uses the namespace prefix '${prefix}', which no '@xmlns:${prefix}' field declares on it or above it`,
			path || name,
		);
	}
}

function plainValue(value: unknown, path: string): string {
	switch (typeof value) {
		case 'string':
			return value;
		case 'number':
		case 'boolean':
		case 'bigint':
			return String(value);
		default:
			if (value instanceof Date) {
				if (Number.isNaN(value.getTime()))
					throw new XmlFieldError(`The field '${path}' holds an invalid date`, path);
				return value.toISOString();
			}
			throw new XmlFieldError(
				`The field '${path}' has a value of type ${typeof value}, which has no XML form`,
				path,
			);
	}
}

/** Escapes what must be escaped; refuses characters XML cannot carry and lone surrogates. */
function escape(value: string, escapes: Record<string, string>, path: string): string {
	if (!NEEDS_ESCAPE_OR_CHECK.test(value)) return value;
	let result = '';
	let from = 0;
	for (let i = 0; i < value.length; i++) {
		const c = value.charCodeAt(i);
		if (c >= 0xd800 && c <= 0xdbff) {
			const next = value.charCodeAt(i + 1);
			if (next >= 0xdc00 && next <= 0xdfff) {
				i++;
				continue;
			}
		}
		if (c >= 0xd800 && c <= 0xdfff) {
			throw new XmlFieldError(
				`The field '${path}' holds a lone surrogate ${describeChar(c)} (half of a character), which XML cannot carry`,
				path,
			);
		}
		if (!isXmlChar(c))
			throw new XmlFieldError(
				`The field '${path}' holds the character ${describeChar(c)}, which XML cannot carry`,
				path,
			);
		const replacement = escapes[value[i]];
		if (replacement === undefined) continue;
		result += value.slice(from, i) + replacement;
		from = i + 1;
	}
	return result + value.slice(from);
}
