import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { isUnknownSession, normalizeSessionId, waitForAllSessions, type WaitResult } from '../../../shared/sessions';
import {
	getServiceCredentials,
	serviceRequest,
	type CustomerOverride,
	type ServiceResponse,
} from '../../../shared/transport';
import {
	customerOption,
	getCustomerOverride,
	getWaitTimeoutMs,
	includeErrorMessageOption,
	waitedOutcome,
	waitTimeoutOption,
} from '../common';
import { asNodeError, itemFailure } from '../itemErrors';
import {
	describeItems,
	documentBody,
	documentJson,
	pairedItems,
	prepareDocuments,
	type XmlDocument,
} from './documents';
import { recallUpload, rememberUpload, uploadKey } from './uploadMemory';

export type UploadEndpoint = 'xml' | 'xml/custom';

function properties(endpoint: UploadEndpoint): INodeProperties[] {
	return [
		{
			displayName: 'XML Source',
			name: 'source',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'Binary File',
					value: 'binary',
					description: 'An XML file in a binary field of each input item',
				},
				{
					name: 'Build From Items',
					value: 'items',
					description: 'One XML document built from the JSON of the input items, one element per item',
				},
				{
					name: 'Text',
					value: 'text',
					description: 'An XML document given as text, one per input item',
				},
			],
			default: 'binary',
			description: 'Where the XML document comes from',
		},
		{
			displayName: 'Input Binary Field',
			name: 'binaryPropertyName',
			type: 'string',
			default: 'data',
			required: true,
			hint: 'The name of the input binary field containing the file to be uploaded',
			displayOptions: { show: { source: ['binary'] } },
		},
		{
			displayName: 'XML',
			name: 'xml',
			type: 'string',
			typeOptions: { rows: 8 },
			default: '',
			required: true,
			placeholder: '<Products><Product>…</Product></Products>',
			description:
				endpoint === 'xml'
					? 'The XML document to upload, in one of the service’s XML formats, as it is (not XML-encoded)'
					: 'The custom XML document to upload, as it is (not XML-encoded); the service transforms it with the XSLTs set up for the account',
			displayOptions: { show: { source: ['text'] } },
		},
		{
			displayName: 'Root Element',
			name: 'rootElement',
			type: 'string',
			default: 'Products',
			required: true,
			description: 'Name of the element that encloses all items of a document',
			displayOptions: { show: { source: ['items'] } },
		},
		{
			displayName: 'Item Element',
			name: 'itemElement',
			type: 'string',
			default: 'Product',
			required: true,
			description:
				'Name of the element each input item becomes. Its fields become child elements; fields starting with @ become attributes and a field named #text the element’s text.',
			displayOptions: { show: { source: ['items'] } },
		},
		{
			displayName: 'Items per Document',
			name: 'itemsPerDocument',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 0,
			description:
				'How many input items go into one document. 0 puts all items into one document (one request); N sends one document per N items.',
			displayOptions: { show: { source: ['items'] } },
		},
		{
			displayName: 'Include XML Declaration',
			name: 'xmlDeclaration',
			type: 'boolean',
			default: true,
			description: 'Whether the document starts with an XML declaration (version 1.0, encoding UTF-8)',
			displayOptions: { show: { source: ['items'] } },
		},
		{
			displayName: 'Options',
			name: 'options',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			options: [
				{
					displayName: 'Content Type',
					name: 'contentType',
					type: 'options',
					options: [
						{ name: 'Application/XML', value: 'application/xml' },
						{ name: 'Text/XML', value: 'text/xml' },
					],
					default: 'application/xml',
					description: 'Media type sent in the Content-Type header of the upload',
				},
				customerOption,
				{
					displayName: 'Fail on Processing Error',
					name: 'failOnProcessingError',
					type: 'boolean',
					default: false,
					description:
						'Whether an item fails when the service finished processing its document with errors. Needs Wait for Completion.',
				},
				{ ...includeErrorMessageOption, description: `${includeErrorMessageOption.description}. Needs Wait for Completion.` },
				{ ...waitTimeoutOption, description: `${waitTimeoutOption.description} Needs Wait for Completion.` },
				{
					displayName: 'Validate Before Upload',
					name: 'validate',
					type: 'boolean',
					default: true,
					description:
						'Whether to check that each document is well-formed XML before any of them is sent, so a broken document costs no request. Large files are checked as a stream.',
				},
				{
					displayName: 'Wait for Completion',
					name: 'waitForCompletion',
					type: 'boolean',
					default: false,
					description:
						'Whether to wait, after all documents are uploaded, until the service has processed them (polled together, backing off from 5 to 60 seconds) and output their status',
				},
			],
		},
	];
}

export function uploadDescription(operation: 'upload' | 'uploadCustom', endpoint: UploadEndpoint): INodeProperties[] {
	return updateDisplayOptions({ show: { resource: ['document'], operation: [operation] } }, properties(endpoint));
}

interface UploadOptions {
	contentType?: string;
	failOnProcessingError?: boolean;
	includeErrorMessage?: boolean;
	waitForCompletion?: boolean;
}

/** A document to upload with the options of its (first) item. */
interface PlannedUpload {
	document: XmlDocument;
	options: UploadOptions;
	customer?: CustomerOverride;
	/** Set when the document's session is to be awaited. */
	timeoutMs?: number;
}

interface Uploaded extends PlannedUpload {
	json: IDataObject;
}

type Slot = { uploaded: Uploaded } | { failure: INodeExecutionData };

type Plan = { upload: PlannedUpload } | { error: Error; itemIndexes: number[] };

function planUpload(context: IExecuteFunctions, document: XmlDocument): Plan {
	const itemIndex = document.itemIndexes[0];
	try {
		const options = context.getNodeParameter('options', itemIndex, {}) as UploadOptions;
		return {
			upload: {
				document,
				options,
				customer: getCustomerOverride.call(context, itemIndex),
				timeoutMs: options.waitForCompletion ? getWaitTimeoutMs.call(context, itemIndex) : undefined,
			},
		};
	} catch (error) {
		return { error: asNodeError(context, error, itemIndex), itemIndexes: document.itemIndexes };
	}
}

function listUploaded(slots: Slot[]): string {
	const lines = slots.flatMap((slot) =>
		'uploaded' in slot
			? [`${describeItems(slot.uploaded.document.itemIndexes)} -> ${String(slot.uploaded.json.sessionId)}`]
			: [],
	);
	return lines.length
		? `Already uploaded in this run (input item -> session ID): ${lines.join('; ')}`
		: 'No document of this run was uploaded.';
}

/** A failure that stops the node: its description says which documents did reach the service. */
function stopWith(context: IExecuteFunctions, error: unknown, itemIndex: number, slots: Slot[]): Error {
	const nodeError = asNodeError(context, error, itemIndex);
	nodeError.description = [nodeError.description, listUploaded(slots)].filter(Boolean).join('\n\n');
	return nodeError;
}

function failureItem(context: IExecuteFunctions, error: unknown, itemIndexes: number[], json: IDataObject = {}): INodeExecutionData {
	const failure = itemFailure(context, error, itemIndexes[0]);
	return { json: { ...json, ...failure.json }, pairedItem: pairedItems(itemIndexes) };
}

/**
 * Upload and Upload Custom XML: every document is read and checked, and the options of its item
 * read, before anything is sent; then the documents are uploaded one by one, then (optionally) all
 * their sessions are awaited together.
 */
export async function executeUpload(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
	endpoint: UploadEndpoint,
): Promise<INodeExecutionData[]> {
	const continueOnFail = this.continueOnFail();
	const plans = (await prepareDocuments(this, items)).map(
		(entry): Plan => (entry.document ? planUpload(this, entry.document) : entry),
	);
	if (!continueOnFail) {
		const invalid = plans.find((plan) => 'error' in plan);
		if (invalid && 'error' in invalid) throw invalid.error;
	}

	const executionId = this.getExecutionId();
	const nodeName = this.getNode().name;
	const slots: Slot[] = [];

	for (const plan of plans) {
		if ('error' in plan) {
			slots.push({ failure: failureItem(this, plan.error, plan.itemIndexes) });
			continue;
		}
		const { document, options, customer } = plan.upload;
		const itemIndex = document.itemIndexes[0];
		try {
			const contentType = options.contentType || 'application/xml';
			const credentials = await getServiceCredentials.call(this, itemIndex);
			const customerIdType = customer?.customerIdType ?? String(credentials.customerIdType);
			const customerId = customer?.customerId ?? String(credentials.customerId ?? '');
			const key = uploadKey({
				executionId,
				nodeName,
				position: document.position,
				sha256: document.sha256,
				endpoint,
				customer: `${customerIdType}:${customerId}`,
			});
			let upload = recallUpload(key);
			const reused = upload !== undefined;
			if (!upload) {
				upload = await sendDocument(this, document, endpoint, contentType, customer);
				rememberUpload(key, upload);
			}
			const json: IDataObject = {
				sessionId: upload.sessionId,
				...documentJson(document),
				contentType,
				endpoint,
				customerId,
				uploadedAt: upload.uploadedAt,
			};
			if (reused) json.reused = true;
			slots.push({ uploaded: { ...plan.upload, json } });
		} catch (error) {
			if (!continueOnFail) throw stopWith(this, error, itemIndex, slots);
			slots.push({ failure: failureItem(this, error, document.itemIndexes) });
		}
	}

	await awaitSessions(this, slots, continueOnFail);

	return slots.map((slot) => {
		if ('failure' in slot) return slot.failure;
		const { document, json } = slot.uploaded;
		return { json, pairedItem: pairedItems(document.itemIndexes) };
	});
}

async function sendDocument(
	context: IExecuteFunctions,
	document: XmlDocument,
	endpoint: UploadEndpoint,
	contentType: string,
	customer: CustomerOverride | undefined,
): Promise<{ sessionId: string; uploadedAt: string }> {
	const itemIndex = document.itemIndexes[0];
	const { body, close } = documentBody(context, document);
	const headers: IDataObject = { 'Content-Type': contentType };
	// A stream has no length of its own; the service gets it from the hashing pass.
	if (typeof body === 'function') headers['Content-Length'] = String(document.bytes);
	let response: ServiceResponse;
	try {
		response = await serviceRequest.call(context, {
			method: 'PUT',
			path: endpoint === 'xml' ? '/api/xml' : '/api/xml/custom',
			body,
			headers,
			customer,
			itemIndex,
			responseType: 'text',
		});
	} finally {
		close();
	}
	const sessionId = normalizeSessionId(response.body);
	if (!sessionId) {
		throw new NodeApiError(
			context.getNode(),
			{ message: 'The service accepted the upload but answered without a session ID' },
			{
				itemIndex,
				httpCode: String(response.statusCode),
				description: `It answered ${response.statusCode} with: ${String(response.body ?? '').slice(0, 200) || '(nothing)'}. List the uploads of today to find the session.`,
			},
		);
	}
	return { sessionId, uploadedAt: new Date().toISOString() };
}

/** Wait for Completion: the sessions of all uploaded documents are polled together. */
async function awaitSessions(context: IExecuteFunctions, slots: Slot[], continueOnFail: boolean): Promise<void> {
	const waiting = slots.flatMap((slot) =>
		'uploaded' in slot && slot.uploaded.timeoutMs !== undefined ? [slot.uploaded] : [],
	);
	if (waiting.length === 0) return;

	let outcomes: WaitResult[];
	try {
		outcomes = await waitForAllSessions.call(
			context,
			waiting.map(({ json, document, customer, options }) => ({
				sessionId: String(json.sessionId),
				itemIndex: document.itemIndexes[0],
				customer,
				includeErrorMessage: options.includeErrorMessage === true,
			})),
			waiting[0].timeoutMs as number,
		);
	} catch (error) {
		const itemIndex = waiting[0].document.itemIndexes[0];
		if (!continueOnFail) throw stopWith(context, error, itemIndex, slots);
		// The uploads themselves succeeded: their items keep the session IDs and say what went wrong.
		const message = asNodeError(context, error, itemIndex).message;
		for (const upload of waiting) upload.json.waitError = message;
		return;
	}
	const outcomeOf = new Map(waiting.map((upload, index) => [upload, outcomes[index]]));

	for (const [index, slot] of slots.entries()) {
		if (!('uploaded' in slot)) continue;
		const outcome = outcomeOf.get(slot.uploaded);
		if (!outcome) continue;
		const { json, document, options } = slot.uploaded;
		if (isUnknownSession(outcome)) {
			// The upload itself succeeded: its item keeps the session ID and says what went wrong.
			if (!continueOnFail) throw stopWith(context, outcome.error, document.itemIndexes[0], slots);
			json.waitError = asNodeError(context, outcome.error, document.itemIndexes[0]).message;
			continue;
		}
		Object.assign(json, waitedOutcome(outcome));
		if (outcome.status !== 'failed' || !options.failOnProcessingError) continue;

		const itemIndex = document.itemIndexes[0];
		const error = new NodeOperationError(
			context.getNode(),
			`Processing of the document of ${describeItems(document.itemIndexes)} ended with errors (session ${outcome.sessionId})`,
			{
				itemIndex,
				description: outcome.errorMessage ?? (outcome.errorUrl ? `Error message: ${outcome.errorUrl}` : undefined),
			},
		);
		if (!continueOnFail) throw stopWith(context, error, itemIndex, slots);
		slots[index] = { failure: failureItem(context, error, document.itemIndexes, json) };
	}
}
