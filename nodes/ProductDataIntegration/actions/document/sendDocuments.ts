import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	isUnfollowedSession,
	normalizeSessionId,
	waitForSessions,
	type WaitResult,
} from '../../../shared/sessions';
import {
	AmbiguousUploadError,
	cleanServiceText,
	effectiveCustomer,
	getServiceCredentials,
	serviceRequest,
	type CustomerOverride,
	type RequestBody,
	type ServiceResponse,
} from '../../../shared/transport';
import { findPossibleArrivals } from '../../../shared/uploads';
import { asNodeError, type ItemFailures } from '../itemErrors';
import { waitedOutcome, type WaitSettings } from '../waiting';
import { describeItems, type XmlDocument } from './documents';
import {
	isAmbiguousUpload,
	sessionsOf,
	uploadedDocuments,
	type AmbiguousUpload,
	type RememberedUpload,
} from './uploadMemory';
import type { UploadSettings } from './uploadSettings';

/**
 * The sending of both upload runs: each planned document uploaded once (an earlier try of this
 * execution answered from memory, or looked for in the day's uploads when its answer never came),
 * then the sessions that are to be awaited polled together.
 */

export type UploadEndpoint = 'xml' | 'xml/custom';

/** A document to upload with the settings of its (first) item, checked. */
interface PlannedUpload {
	document: XmlDocument;
	contentType: string;
	customer?: CustomerOverride;
	/** Set when the document's session is to be awaited: how. */
	wait?: WaitSettings;
	failOnProcessingError: boolean;
}

interface Uploaded extends PlannedUpload {
	json: IDataObject;
}

/** What became of one document: uploaded (and perhaps awaited), or failed for the items it stands for. */
export type Slot = { uploaded: Uploaded } | { failure: INodeExecutionData; itemIndexes: number[] };

export type Plan = { upload: PlannedUpload } | { error: Error; itemIndexes: number[] };

/** `alwaysWait`: Only Changed Products confirms its products in the same run. */
export function planUpload(
	context: IExecuteFunctions,
	settings: UploadSettings,
	document: XmlDocument,
	alwaysWait = false,
): Plan {
	const itemIndex = document.itemIndexes[0];
	try {
		return {
			upload: {
				document,
				customer: settings.customerOf(itemIndex),
				contentType: settings.contentTypeOf(itemIndex),
				wait: settings.waitOf(itemIndex, alwaysWait),
				failOnProcessingError: settings.failOnProcessingErrorOf(itemIndex),
			},
		};
	} catch (error) {
		return { error: asNodeError(context, error, itemIndex), itemIndexes: document.itemIndexes };
	}
}

function listUploaded(slots: Slot[]): string {
	const lines = slots.flatMap((slot) =>
		'uploaded' in slot
			? [
					`${describeItems(slot.uploaded.document.itemIndexes)} -> ${String(slot.uploaded.json.sessionId)}`,
				]
			: [],
	);
	return lines.length
		? `Already uploaded in this run (input item -> session ID): ${lines.join('; ')}`
		: 'No document of this run was uploaded.';
}

/** An error that ends the run also lists the sessions already uploaded, so none is lost. */
function listingUploaded(slots: Slot[]): (error: { description?: string | null }) => void {
	return (error) => {
		error.description = [error.description, listUploaded(slots)].filter(Boolean).join('\n\n');
	};
}

/** Uploads the planned documents one by one, then awaits the sessions that are to be awaited. */
export async function uploadPlans(
	context: IExecuteFunctions,
	plans: Plan[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
): Promise<Slot[]> {
	// Without Continue On Fail, an invalid item ends the run before any document is sent.
	for (const plan of failures.continueOnFail ? [] : plans) {
		if ('error' in plan) failures.output(plan.error, plan.itemIndexes);
	}

	const slots: Slot[] = [];

	for (const plan of plans) {
		if ('error' in plan) {
			slots.push({
				failure: failures.output(plan.error, plan.itemIndexes),
				itemIndexes: plan.itemIndexes,
			});
			continue;
		}
		const { document, contentType, customer } = plan.upload;
		const itemIndex = document.itemIndexes[0];
		try {
			const credentials = await getServiceCredentials(context, itemIndex);
			const { customerIdType, customerId } = effectiveCustomer(credentials, customer);
			const key = [document.position, document.sha256, endpoint, `${customerIdType}:${customerId}`];
			const remembered = uploadedDocuments.recall(context, key);
			let upload = isAmbiguousUpload(remembered) ? undefined : remembered;
			if (isAmbiguousUpload(remembered)) {
				upload = await recoverUpload(context, document, remembered, customer, sessionsOf(context));
				if (upload) uploadedDocuments.remember(context, key, upload);
			}
			const reused = upload !== undefined;
			if (!upload) {
				const attempt = { sentAt: Date.now(), bytes: document.bytes };
				try {
					upload = await sendDocument(context, document, endpoint, contentType, customer);
				} catch (error) {
					// The next try (Retry On Fail) looks for it before sending it again.
					if (error instanceof AmbiguousUploadError)
						uploadedDocuments.remember(context, key, attempt);
					throw asNodeError(context, error, itemIndex);
				}
				uploadedDocuments.remember(context, key, upload);
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
			slots.push({
				failure: failures.output(error, document.itemIndexes, {}, listingUploaded(slots)),
				itemIndexes: document.itemIndexes,
			});
		}
	}

	await addWaitedOutcomes(context, slots, failures);
	return slots;
}

/**
 * A document whose earlier try in this execution got no answer: the session it made, found in the
 * list of the day's uploads; undefined when the list shows it did not arrive (it is then sent
 * again). When the list cannot tell, the item fails again, as it did on the earlier try.
 */
async function recoverUpload(
	context: IExecuteFunctions,
	document: XmlDocument,
	attempt: AmbiguousUpload,
	customer: CustomerOverride | undefined,
	known: Set<string>,
): Promise<RememberedUpload | undefined> {
	const itemIndex = document.itemIndexes[0];
	const arrivals = await findPossibleArrivals(context, attempt, {
		customer,
		itemIndex,
		known,
	});
	if (arrivals.length === 0) return undefined;
	// The listed id becomes the item's session ID as an upload's answer would: only when it is one.
	const sessionId = arrivals.length === 1 ? normalizeSessionId(arrivals[0].id) : undefined;
	if (sessionId !== undefined) return { sessionId, uploadedAt: String(arrivals[0].receivedAt) };
	const listed = cleanServiceText(
		arrivals.map((record) => JSON.stringify(record.id ?? null)).join(', '),
	);
	throw new NodeOperationError(
		context.getNode(),
		`The document of ${describeItems(document.itemIndexes)} may or may not have reached the service on an earlier try, and the list of uploads cannot tell`,
		{
			itemIndex,
			description:
				arrivals.length === 1
					? `An upload of the same length (${attempt.bytes} bytes) arrived since that try, but its id is not a session ID: ${listed}. It was not sent again, because a second upload could duplicate the first.`
					: `${arrivals.length} uploads of the same length (${attempt.bytes} bytes) arrived since that try: ${listed}. It was not sent again, because a second upload could duplicate the first.`,
		},
	);
}

export async function sendDocument(
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
		response = await serviceRequest(context, {
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
				description: `It answered ${response.statusCode} with: ${cleanServiceText(String(response.body ?? ''), 200) || '(nothing)'}. List the uploads of today to find the session.`,
			},
		);
	}
	return { sessionId, uploadedAt: new Date().toISOString() };
}

/** Wait for Completion: the sessions of all uploaded documents are polled together. */
async function addWaitedOutcomes(
	context: IExecuteFunctions,
	slots: Slot[],
	failures: ItemFailures,
): Promise<void> {
	const waiting = slots.flatMap((slot) =>
		'uploaded' in slot && slot.uploaded.wait ? [slot.uploaded] : [],
	);
	if (waiting.length === 0) return;

	let outcomes: WaitResult[];
	try {
		outcomes = await waitForSessions(
			context,
			waiting.map(({ json, wait }) => ({
				sessionId: String(json.sessionId),
				...(wait as WaitSettings),
			})),
		);
	} catch (error) {
		// The uploads themselves succeeded: their items keep the session IDs and say what went wrong.
		const { error: message } = failures.output(
			error,
			waiting[0].document.itemIndexes,
			{},
			listingUploaded(slots),
		).json;
		for (const upload of waiting) upload.json.waitError = message;
		return;
	}
	const outcomeOf = new Map(waiting.map((upload, index) => [upload, outcomes[index]]));

	for (const [index, slot] of slots.entries()) {
		if (!('uploaded' in slot)) continue;
		const outcome = outcomeOf.get(slot.uploaded);
		if (!outcome) continue;
		const { json, document, failOnProcessingError } = slot.uploaded;
		if (isUnfollowedSession(outcome)) {
			// The upload itself succeeded: its item keeps the session ID and says what went wrong.
			json.waitError = failures.output(
				outcome.error,
				document.itemIndexes,
				{},
				listingUploaded(slots),
			).json.error;
			continue;
		}
		Object.assign(json, waitedOutcome(outcome));
		if (outcome.status !== 'failed' || !failOnProcessingError) continue;

		const itemIndex = document.itemIndexes[0];
		const error = new NodeOperationError(
			context.getNode(),
			`Processing of the document of ${describeItems(document.itemIndexes)} ended with errors (session ${outcome.sessionId})`,
			{
				itemIndex,
				// The output keeps the whole message; an error may become a log line.
				description:
					outcome.errorMessage !== undefined
						? cleanServiceText(outcome.errorMessage)
						: outcome.errorUrl
							? `Error message: ${cleanServiceText(outcome.errorUrl)}`
							: undefined,
			},
		);
		slots[index] = {
			failure: failures.output(error, document.itemIndexes, json, listingUploaded(slots)),
			itemIndexes: document.itemIndexes,
		};
	}
}

export interface DocumentBody {
	/** A buffer, or for stored binary data a function that opens a fresh stream for each attempt. */
	body: Buffer | (() => Promise<RequestBody>);
	/** Releases the stored file after the last attempt. */
	close(): void;
}

/**
 * The body of an upload. A refused request is sent again with a new stream; the stream of the
 * refused attempt is closed then, since a service that answers before reading a body to its end
 * leaves it paused, holding its file open.
 */
export function documentBody(context: IExecuteFunctions, document: XmlDocument): DocumentBody {
	if (document.buffer) return { body: document.buffer, close: () => {} };
	const binaryDataId = document.binaryDataId as string;
	let attempt: { destroy(): void } | undefined;
	const close = () => attempt?.destroy();
	return {
		body: async () => {
			close();
			const stream = await context.helpers.getBinaryStream(binaryDataId);
			attempt = stream;
			return stream;
		},
		close,
	};
}

export function documentJson(document: XmlDocument): IDataObject {
	return { fileName: document.fileName, bytes: document.bytes, validation: document.validation };
}
