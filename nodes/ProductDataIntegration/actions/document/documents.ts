import { createHash } from 'crypto';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { pause, pauseWhenDue } from '../../../shared/pauses';
import { cancelledError, cancelSignal } from '../../../shared/transport';
import {
	buildXmlDocument,
	prepareItemForXml,
	type PreparedItem,
	XmlFieldError,
} from '../../../shared/xml/build';
import { isXmlName } from '../../../shared/xml/chars';
import { checkXml, checkXmlStream, type XmlProblem } from '../../../shared/xml/check';
import {
	ENCODED_HEAD_BYTES,
	findXmlEncodedField,
	HOW_TO_DECODE,
	isXmlEncodedDocument,
} from '../../../shared/xml/encoded';
import { uploadSettings, type UploadSettings } from './uploadSettings';

/** One document to upload: a binary file or text of one item, or a document built from a group. */
export interface XmlDocument {
	/** Position among the documents of this run. */
	position: number;
	/** The input items the document stands for (one, or a whole group for Build From Items). */
	itemIndexes: number[];
	fileName: string | null;
	/** Held in memory: text, built documents, and binary data n8n keeps inline. */
	buffer?: Buffer;
	/** Binary data in n8n's binary store, read as a stream and never held whole. */
	binaryDataId?: string;
	bytes: number;
	sha256: string;
	/** 'passed', or why the check was not made. */
	validation: string;
}

/** Either a document ready to upload, or why the items it would stand for cannot be uploaded. */
export type PreparedDocument =
	| { document: XmlDocument; error?: undefined }
	| { document?: undefined; error: NodeOperationError; itemIndexes: number[] };

/** "item 3", "items 0-9", or for a group with gaps (Only Changed Products) "items 2, 5, 9 and 4 more". */
export function describeItems(itemIndexes: number[]): string {
	if (itemIndexes.length === 1) return `item ${itemIndexes[0]}`;
	const first = itemIndexes[0];
	const last = itemIndexes[itemIndexes.length - 1];
	if (last - first === itemIndexes.length - 1) return `items ${first}-${last}`;
	const named = itemIndexes.slice(0, 3).join(', ');
	return itemIndexes.length > 3
		? `items ${named} and ${itemIndexes.length - 3} more`
		: `items ${named}`;
}

function capitalized(text: string): string {
	return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Reads every document the input items (or those of `itemIndexes`) describe, checks it and hashes
 * it, before anything is sent: a document that would fail costs no request. Documents in n8n's
 * binary store are read as a stream (one pass for both the check and the hash); nothing is held in
 * memory twice.
 */
export async function prepareDocuments(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	settings: UploadSettings = uploadSettings(context),
	itemIndexes: number[] = items.map((_, index) => index),
): Promise<PreparedDocument[]> {
	if (itemIndexes.length === 0) return [];
	const { source } = settings;
	const prepared: PreparedDocument[] = [];
	const groups =
		source === 'items' ? groupItems(context, itemIndexes) : itemIndexes.map((index) => [index]);

	for (const itemIndexes of groups) {
		const position = prepared.length;
		const first = itemIndexes[0];
		try {
			const validate = settings.validateOf(first);
			let document: XmlDocument;
			if (source === 'binary') {
				document = await readBinaryDocument(context, items, first, position, validate);
			} else {
				const buffer =
					source === 'text'
						? readTextDocument(context, first)
						: await buildDocument(context, items, itemIndexes);
				if (isXmlEncodedDocument(buffer)) throw xmlEncoded(context, itemIndexes);
				const { problem, sha256 } = await checkAndHash(buffer, validate);
				if (problem) throw notWellFormed(context, itemIndexes, problem);
				document = {
					position,
					itemIndexes,
					fileName: null,
					buffer,
					bytes: buffer.length,
					sha256,
					validation: validate ? 'passed' : 'skipped: Validate Before Upload is off',
				};
			}
			prepared.push({ document });
		} catch (error) {
			const nodeError =
				error instanceof NodeOperationError
					? error
					: new NodeOperationError(context.getNode(), error as Error, { itemIndex: first });
			prepared.push({ error: nodeError, itemIndexes });
		}
	}
	return prepared;
}

/** Bytes checked and hashed between two pauses. */
const BYTES_BETWEEN_PAUSES = 1024 * 1024;

/**
 * Checks and hashes a document held in memory in slices with a pause between them: a document of a
 * whole catalogue (tens of MB) does not hold n8n up in one piece.
 */
export async function checkAndHash(
	buffer: Buffer,
	validate: boolean,
): Promise<{ problem: XmlProblem | null; sha256: string }> {
	const hash = createHash('sha256');
	async function* slices(): AsyncGenerator<Buffer> {
		for (let start = 0; start < buffer.length; start += BYTES_BETWEEN_PAUSES) {
			if (start > 0) await pause();
			yield buffer.subarray(start, start + BYTES_BETWEEN_PAUSES);
		}
	}
	let problem: XmlProblem | null = null;
	if (validate) problem = await checkXmlStream(slices(), (slice) => hash.update(slice));
	else for await (const slice of slices()) hash.update(slice);
	return { problem, sha256: hash.digest('hex') };
}

function groupItems(context: IExecuteFunctions, itemIndexes: number[]): number[][] {
	const perDocument = Number(context.getNodeParameter('itemsPerDocument', 0, 0));
	if (!Number.isInteger(perDocument) || perDocument < 0) {
		throw new NodeOperationError(
			context.getNode(),
			'Items per Document must be a whole number of 0 or more',
			{
				itemIndex: 0,
				description: '0 puts all items into one document; N builds one document from every N items',
			},
		);
	}
	const size = perDocument === 0 ? itemIndexes.length : perDocument;
	const groups: number[][] = [];
	for (let start = 0; start < itemIndexes.length; start += size)
		groups.push(itemIndexes.slice(start, start + size));
	return groups;
}

function notWellFormed(
	context: IExecuteFunctions,
	itemIndexes: number[],
	problem: XmlProblem,
): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`The XML document of ${describeItems(itemIndexes)} is not well-formed: ${problem.message} (line ${problem.line}, column ${problem.column})`,
		{
			itemIndex: itemIndexes[0],
			description:
				'Nothing was uploaded for it. Correct the document, or turn off the option Validate Before Upload to let the service judge it.',
		},
	);
}

function xmlEncoded(context: IExecuteFunctions, itemIndexes: number[]): NodeOperationError {
	return new NodeOperationError(
		context.getNode(),
		`The XML document of ${describeItems(itemIndexes)} is XML-encoded as a whole: it starts with "&lt;" where the document's "<" belongs`,
		{
			itemIndex: itemIndexes[0],
			description: `The service wants the document itself, not encoded as a SOAP body carried it. Nothing was uploaded for it. Decode it first: ${HOW_TO_DECODE}.`,
		},
	);
}

async function readBinaryDocument(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	itemIndex: number,
	position: number,
	validate: boolean,
): Promise<XmlDocument> {
	const propertyName = String(
		context.getNodeParameter('binaryPropertyName', itemIndex, 'data'),
	).trim();
	const binary = items[itemIndex].binary ?? {};
	const binaryData = propertyName === '' ? undefined : binary[propertyName];
	if (!binaryData) {
		const present = Object.keys(binary);
		throw new NodeOperationError(
			context.getNode(),
			`Item ${itemIndex} has no binary field "${propertyName}" (Input Binary Field)`,
			{
				itemIndex,
				description: present.length
					? `Binary fields of this item: ${present.join(', ')}. Set Input Binary Field to the one that holds the XML file.`
					: 'The item holds no binary data. Read the XML file into the item first (e.g. with Read/Write Files from Disk or HTTP Request), or choose another XML Source.',
			},
		);
	}

	const hash = createHash('sha256');
	let bytes = 0;
	let head = Buffer.alloc(0);
	const measure = (chunk: Buffer) => {
		hash.update(chunk);
		bytes += chunk.length;
		if (head.length < ENCODED_HEAD_BYTES)
			head = Buffer.concat([head, chunk.subarray(0, ENCODED_HEAD_BYTES - head.length)]);
	};
	let buffer: Buffer | undefined;
	let problem: XmlProblem | null = null;
	if (binaryData.id) {
		problem = await readStoredBinary(context, binaryData.id, itemIndex, validate, measure);
	} else {
		buffer = await context.helpers.getBinaryDataBuffer(itemIndex, propertyName);
		measure(buffer);
		problem = validate ? checkXml(buffer) : null;
	}
	if (isXmlEncodedDocument(head)) throw xmlEncoded(context, [itemIndex]);
	if (problem) throw notWellFormed(context, [itemIndex], problem);
	if (bytes === 0) {
		throw new NodeOperationError(
			context.getNode(),
			`The binary field "${propertyName}" of item ${itemIndex} is empty`,
			{
				itemIndex,
			},
		);
	}
	return {
		position,
		itemIndexes: [itemIndex],
		fileName: binaryData.fileName ?? null,
		buffer,
		binaryDataId: binaryData.id || undefined,
		bytes,
		sha256: hash.digest('hex'),
		validation: validate ? 'passed' : 'skipped: Validate Before Upload is off',
	};
}

/** Reads a file in n8n's binary store as a stream, once, for both the check and `measure`. */
async function readStoredBinary(
	context: IExecuteFunctions,
	binaryDataId: string,
	itemIndex: number,
	validate: boolean,
	measure: (chunk: Buffer) => void,
): Promise<XmlProblem | null> {
	const stream = await context.helpers.getBinaryStream(binaryDataId);
	// Reading a large file takes seconds; a cancelled execution stops it instead of waiting.
	const signal = cancelSignal(context);
	const stop = () => stream.destroy(new Error('The execution was cancelled'));
	signal?.addEventListener('abort', stop, { once: true });
	try {
		if (validate) return await checkXmlStream(stream, measure);
		for await (const chunk of stream) measure(chunk as Buffer);
		return null;
	} catch (error) {
		if (signal?.aborted) throw cancelledError(context.getNode(), itemIndex);
		throw new NodeOperationError(context.getNode(), error as Error, { itemIndex });
	} finally {
		signal?.removeEventListener('abort', stop);
	}
}

function readTextDocument(context: IExecuteFunctions, itemIndex: number): Buffer {
	const value = context.getNodeParameter('xml', itemIndex, '') as unknown;
	if (typeof value !== 'string') {
		throw new NodeOperationError(
			context.getNode(),
			`The XML field of item ${itemIndex} is not text`,
			{
				itemIndex,
				description: 'Give the XML document as a string, e.g. {{ $json.xml }}',
			},
		);
	}
	if (value.trim() === '') {
		throw new NodeOperationError(context.getNode(), `The XML field of item ${itemIndex} is empty`, {
			itemIndex,
		});
	}
	return Buffer.from(value, 'utf8');
}

export function elementName(
	context: IExecuteFunctions,
	parameter: 'rootElement' | 'itemElement',
	itemIndex: number,
): string {
	const label = parameter === 'rootElement' ? 'Root Element' : 'Item Element';
	const name = String(context.getNodeParameter(parameter, itemIndex, '')).trim();
	if (!isXmlName(name)) {
		throw new NodeOperationError(
			context.getNode(),
			`${label} "${name}" of item ${itemIndex} is not a valid XML element name`,
			{
				itemIndex,
				description:
					'An element name starts with a letter or underscore and holds no spaces, e.g. Products',
			},
		);
	}
	if (parameter === 'rootElement' && name.includes(':')) {
		throw new NodeOperationError(
			context.getNode(),
			`${label} "${name}" of item ${itemIndex} has a namespace prefix that nothing declares`,
			{
				itemIndex,
				description:
					'The root element has no attributes that could declare the prefix: use a name without one, e.g. Products',
			},
		);
	}
	return name;
}

/** Builds the document of a group, pausing now and then: a group may be a whole catalogue. */
async function buildDocument(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	itemIndexes: number[],
): Promise<Buffer> {
	const first = itemIndexes[0];
	const rootElement = elementName(context, 'rootElement', first);
	const itemElement = elementName(context, 'itemElement', first);
	const declaration = context.getNodeParameter('xmlDeclaration', first, true) as boolean;
	const entries: PreparedItem[] = [];
	for (const itemIndex of itemIndexes) {
		await pauseWhenDue();
		entries.push(prepareEntry(context, items, itemIndexes, itemIndex, itemElement));
	}
	return Buffer.from(buildXmlDocument(entries, { rootElement, declaration }), 'utf8');
}

export function prepareEntry(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	itemIndexes: number[],
	itemIndex: number,
	itemElement: string,
): PreparedItem {
	const encodedField = findXmlEncodedField(items[itemIndex].json);
	if (encodedField !== null) {
		throw new NodeOperationError(
			context.getNode(),
			`Item ${itemIndex} cannot become XML: the field '${encodedField}' holds an XML-encoded document (it starts with "&lt;?xml")`,
			{
				itemIndex,
				description: `Build From Items writes every field as text, so the service would get that document as text. Nothing was uploaded for ${describeItems(itemIndexes)}. To upload the document itself, decode it (${HOW_TO_DECODE}) and choose XML Source: Text.`,
			},
		);
	}
	try {
		return prepareItemForXml(items[itemIndex].json, itemElement);
	} catch (error) {
		if (!(error instanceof XmlFieldError))
			throw new NodeOperationError(context.getNode(), error as Error, { itemIndex });
		throw new NodeOperationError(
			context.getNode(),
			`Item ${itemIndex} cannot become XML: ${error.message}`,
			{
				itemIndex,
				description: `${capitalized(describeItems(itemIndexes))} would make one document; nothing was uploaded for them. Rename or remove the field "${error.field}" (e.g. with an Edit Fields node) before this node.`,
			},
		);
	}
}
