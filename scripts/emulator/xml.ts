import { isUtf8 } from 'node:buffer';
import { TextDecoder } from 'node:util';

import { XMLValidator } from 'fast-xml-parser';

import type { EmulatorEnvironment, ProcessingError } from './types';

export interface DecodedDocument {
	text: string;
	/** Encoding the document was decoded with (normalised lower-case label). */
	encoding: string;
	/** Why the document's encoding is not UTF-8, or null when it is. */
	encodingProblem: string | null;
}

export interface DocumentAnalysis {
	/** Reason the document is not well-formed, or null. */
	notWellFormed: string | null;
	failMarker: boolean;
	processingMs: number | null;
	imageUris: string[];
	/** Data-format errors found by the test environment's additional validation. */
	validationErrors: ProcessingError[];
}

const IMAGE_EXTENSION = /\.(?:jpe?g|png|gif|webp|tiff?|bmp|svg|avif|heic)$/i;
const URL_IN_TEXT = /https?:\/\/[^\s<>"']+/gi;
const IDENTIFIER_NAMES = new Set([
	'id',
	'sku',
	'productid',
	'productnumber',
	'itemnumber',
	'articlenumber',
	'ean',
	'gtin',
	'identifier',
]);
const MAX_REPORTED_ERRORS = 100;

const UTF8_LABELS = new Set(['utf-8', 'utf8']);

function declaredEncoding(body: Buffer): string | null {
	const head = body.toString('latin1', 0, Math.min(body.length, 256));
	const match =
		/^(?:\uFEFF|\u00EF\u00BB\u00BF)?\s*<\?xml\s[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)["']/.exec(
			head,
		);
	return match ? match[1].toLowerCase() : null;
}

/**
 * Decodes a document as a parser would: a byte-order mark first, then the XML declaration's
 * encoding, UTF-8 otherwise. Documents in other encodings are still read (the production service
 * accepts them); the problem is reported for the test environment's stricter validation.
 */
export function decodeDocument(body: Buffer): DecodedDocument {
	if (body[0] === 0xff && body[1] === 0xfe) {
		return {
			text: new TextDecoder('utf-16le').decode(body),
			encoding: 'utf-16le',
			encodingProblem: 'The document is encoded in UTF-16; the service expects UTF-8.',
		};
	}
	if (body[0] === 0xfe && body[1] === 0xff) {
		return {
			text: new TextDecoder('utf-16be').decode(body),
			encoding: 'utf-16be',
			encodingProblem: 'The document is encoded in UTF-16; the service expects UTF-8.',
		};
	}
	const declared = declaredEncoding(body);
	if (declared !== null && !UTF8_LABELS.has(declared)) {
		let decoder: TextDecoder | null = null;
		try {
			decoder = new TextDecoder(declared);
		} catch {
			decoder = null;
		}
		return {
			text: decoder ? decoder.decode(body) : body.toString('utf8'),
			encoding: decoder ? decoder.encoding : 'utf-8',
			encodingProblem: `The document declares the encoding "${declared}"; the service expects UTF-8.`,
		};
	}
	return {
		text: body.toString('utf8'),
		encoding: 'utf-8',
		encodingProblem: isUtf8(body) ? null : 'The document contains bytes that are not valid UTF-8.',
	};
}

function decodeEntities(value: string): string {
	if (!value.includes('&')) return value;
	return value.replace(
		/&(?:#x([0-9a-fA-F]+)|#(\d+)|(amp|lt|gt|quot|apos));/g,
		(whole, hex, dec, name) => {
			if (hex) return String.fromCodePoint(parseInt(hex as string, 16));
			if (dec) return String.fromCodePoint(parseInt(dec as string, 10));
			switch (name) {
				case 'amp':
					return '&';
				case 'lt':
					return '<';
				case 'gt':
					return '>';
				case 'quot':
					return '"';
				case 'apos':
					return "'";
				default:
					return whole as string;
			}
		},
	);
}

function isImageUrl(url: string): boolean {
	let path: string;
	try {
		path = new URL(url).pathname;
	} catch {
		return false;
	}
	return IMAGE_EXTENSION.test(path);
}

function localName(qualified: string): string {
	const colon = qualified.indexOf(':');
	return (colon >= 0 ? qualified.slice(colon + 1) : qualified).toLowerCase();
}

interface OpenElement {
	name: string;
	local: string;
	line: number;
	/** Only kept for elements whose text matters (identifiers of products, image elements). */
	text: string | null;
	isProduct: boolean;
	hasIdentifier: boolean;
}

// One pass over the markup. Comments, CDATA, processing instructions and the DOCTYPE (with its
// internal subset) are matched before tags so that their content is never taken for markup.
const TOKEN =
	/<(?:!--([\s\S]*?)-->|!\[CDATA\[([\s\S]*?)\]\]>|\?[\s\S]*?\?>|!DOCTYPE(?:[^[>]|\[[\s\S]*?\])*>|(\/?)([^\s/>!?]+)((?:"[^"]*"|'[^']*'|[^>"'/]|\/(?!>))*)(\/?)>)/g;
const ATTRIBUTE = /([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
const PROCESSING_MARKER = /^emulator:processing-ms=(\d+)$/;

/**
 * Well-formedness (fast-xml-parser's validator, plus the single-root rule it does not check), the
 * emulator's markers, image URLs, and the test environment's data-format rules, in one validation
 * and one scan of the text.
 */
export function analyseDocument(
	text: string,
	environment: EmulatorEnvironment,
	encodingProblem: string | null,
): DocumentAnalysis {
	const analysis: DocumentAnalysis = {
		notWellFormed: null,
		failMarker: false,
		processingMs: null,
		imageUris: [],
		validationErrors: [],
	};
	if (text.trim() === '') {
		analysis.notWellFormed = 'The document is empty.';
		return analysis;
	}
	const validation = XMLValidator.validate(text);
	if (validation !== true) {
		analysis.notWellFormed = `${validation.err.msg} (line ${validation.err.line})`;
		return analysis;
	}
	const strict = environment === 'test';
	const images = new Set<string>();
	const errors: ProcessingError[] = [];
	let omittedErrors = 0;
	const report = (error: ProcessingError) => {
		if (errors.length < MAX_REPORTED_ERRORS) errors.push(error);
		else omittedErrors++;
	};
	if (strict && encodingProblem) report({ code: 'InvalidEncoding', message: encodingProblem });

	const collectUrls = (value: string) => {
		if (!value.includes('http')) return;
		for (const match of value.matchAll(URL_IN_TEXT)) {
			// Prose around a URL: "see https://x/a.jpg, or ..." ends the URL before the punctuation.
			const url = decodeEntities(match[0]).replace(/[.,;:!?)\]}]+$/, '');
			if (isImageUrl(url)) images.add(url);
		}
	};

	let line = 1;
	let counted = 0;
	const lineAt = (index: number) => {
		for (let i = text.indexOf('\n', counted); i >= 0 && i < index; i = text.indexOf('\n', i + 1))
			line++;
		counted = index;
		return line;
	};

	const stack: OpenElement[] = [];
	let roots = 0;
	let last = 0;
	TOKEN.lastIndex = 0;
	const appendText = (segment: string) => {
		if (segment === '') return;
		const top = stack[stack.length - 1];
		if (top && top.text !== null) top.text += segment;
		collectUrls(segment);
	};
	for (let match = TOKEN.exec(text); match !== null; match = TOKEN.exec(text)) {
		appendText(text.slice(last, match.index));
		last = TOKEN.lastIndex;
		const [, comment, cdata, closing, name, attributes, selfClosing] = match;
		if (comment !== undefined) {
			const body = comment.trim();
			if (body === 'emulator:fail') analysis.failMarker = true;
			const processing = PROCESSING_MARKER.exec(body);
			if (processing) analysis.processingMs = Number(processing[1]);
			continue;
		}
		if (cdata !== undefined) {
			appendText(cdata);
			continue;
		}
		if (name === undefined) continue;
		if (closing === '/') {
			const element = stack.pop();
			if (!element) continue;
			finishElement(element, stack[stack.length - 1]);
			continue;
		}
		if (stack.length === 0) roots++;
		const local = localName(name);
		const parent = stack[stack.length - 1];
		const isProduct = strict && local === 'product';
		const element: OpenElement = {
			name,
			local,
			line: isProduct ? lineAt(match.index) : 0,
			text:
				local.includes('image') || (parent?.isProduct && IDENTIFIER_NAMES.has(local)) ? '' : null,
			isProduct,
			hasIdentifier: false,
		};
		if (attributes.includes('=')) {
			for (const attribute of attributes.matchAll(ATTRIBUTE)) {
				const value = decodeEntities(attribute[2] ?? attribute[3] ?? '');
				collectUrls(value);
				if (isProduct && IDENTIFIER_NAMES.has(localName(attribute[1])) && value.trim() !== '') {
					element.hasIdentifier = true;
				}
			}
		}
		if (selfClosing === '/') finishElement(element, parent);
		else stack.push(element);
	}

	function finishElement(element: OpenElement, parent: OpenElement | undefined) {
		const value = element.text === null ? '' : decodeEntities(element.text).trim();
		if (element.local.includes('image') && /^https?:\/\/\S+$/i.test(value)) images.add(value);
		if (parent?.isProduct && IDENTIFIER_NAMES.has(element.local) && value !== '') {
			parent.hasIdentifier = true;
		}
		if (element.isProduct && !element.hasIdentifier) {
			report({
				code: 'MissingIdentifier',
				message: `Element <${element.name}> at line ${element.line} has no identifier (an attribute or child element named id, sku, productId, productNumber, itemNumber, articleNumber, ean, gtin or identifier).`,
				element: element.name,
				line: element.line,
			});
		}
	}

	if (roots !== 1) {
		analysis.notWellFormed = 'The document must have exactly one root element.';
		return analysis;
	}
	if (omittedErrors > 0) {
		errors.push({
			code: 'TooManyErrors',
			message: `${omittedErrors} further errors were not reported.`,
		});
	}
	analysis.imageUris = [...images];
	analysis.validationErrors = errors;
	return analysis;
}
