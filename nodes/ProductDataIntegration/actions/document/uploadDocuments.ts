import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { getCustomerOverride } from '../../../shared/customer';
import {
	isUnfollowedSession,
	normalizeSessionId,
	waitForSessions,
	type SessionToAwait,
	type WaitResult,
} from '../../../shared/sessions';
import {
	AmbiguousUploadError,
	cleanServiceText,
	effectiveCustomer,
	getServiceCredentials,
	serviceRequest,
	type CustomerOverride,
	type ServiceResponse,
} from '../../../shared/transport';
import { findPossibleArrivals } from '../../../shared/uploads';
import { asNodeError, pairedItems, type ItemFailures } from '../itemErrors';
import { waitedOutcome, waitSettings } from '../waiting';
import {
	describeItems,
	documentBody,
	documentJson,
	prepareDocuments,
	type XmlDocument,
} from './documents';
import {
	isAmbiguousUpload,
	sessionsOf,
	uploadedDocuments,
	type AmbiguousUpload,
	type RememberedUpload,
} from './uploadMemory';
import {
	bucketSecondsFor,
	changedProductsSettings,
	itemContent,
	productEntry,
	readProducts,
	reasonOf,
	type ChangedProductsSettings,
	type ProductReason,
} from './changedProducts';
import { aloneInMemory, recallProducts, rememberRun, type ProductEntry } from './productMemory';

export type UploadEndpoint = 'xml' | 'xml/custom';

interface UploadOptions {
	contentType?: string;
	failOnProcessingError?: boolean;
	waitForCompletion?: boolean;
}

/** A document to upload with the options of its (first) item. */
interface PlannedUpload {
	document: XmlDocument;
	options: UploadOptions;
	customer?: CustomerOverride;
	/** Set when the document's session is to be awaited: how. */
	wait?: Omit<SessionToAwait, 'sessionId'>;
}

interface Uploaded extends PlannedUpload {
	json: IDataObject;
}

/** What became of one document: uploaded (and perhaps awaited), or failed for the items it stands for. */
type Slot = { uploaded: Uploaded } | { failure: INodeExecutionData; itemIndexes: number[] };

type Plan = { upload: PlannedUpload } | { error: Error; itemIndexes: number[] };

/** `alwaysWait`: Only Changed Products confirms its products in the same run. */
function planUpload(context: IExecuteFunctions, document: XmlDocument, alwaysWait = false): Plan {
	const itemIndex = document.itemIndexes[0];
	try {
		const options = context.getNodeParameter('options', itemIndex, {}) as UploadOptions;
		return {
			upload: {
				document,
				options,
				customer: getCustomerOverride(context, itemIndex),
				wait:
					options.waitForCompletion || alwaysWait ? waitSettings(context, itemIndex) : undefined,
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

/**
 * Upload and Upload Custom XML: every document is read and checked, and the options of its item
 * read, before anything is sent; then the documents are uploaded one by one, then (optionally) all
 * their sessions are awaited together.
 */
export async function uploadDocuments(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
): Promise<INodeExecutionData[]> {
	const onlyChanged = changedProductsSettings(context);
	if (onlyChanged) {
		return await aloneInMemory(
			context,
			async () => await uploadChangedProducts(context, items, failures, endpoint, onlyChanged),
		);
	}

	const plans = (await prepareDocuments(context, items)).map(
		(entry): Plan => (entry.document ? planUpload(context, entry.document) : entry),
	);
	const slots = await uploadPlans(context, plans, failures, endpoint);
	return slots.map(slotOutput);
}

function slotOutput(slot: Slot): INodeExecutionData {
	if ('failure' in slot) return slot.failure;
	const { document, json } = slot.uploaded;
	return { json, pairedItem: pairedItems(document.itemIndexes) };
}

/** Uploads the planned documents one by one, then awaits the sessions that are to be awaited. */
async function uploadPlans(
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
		const { document, options, customer } = plan.upload;
		const itemIndex = document.itemIndexes[0];
		try {
			const contentType = options.contentType || 'application/xml';
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
				...(wait as Omit<SessionToAwait, 'sessionId'>),
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
		const { json, document, options } = slot.uploaded;
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
		if (outcome.status !== 'failed' || !options.failOnProcessingError) continue;

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

/** The entries of one run's products, by input item. */
type Entries = Map<number, ProductEntry & { reason: ProductReason }>;

/**
 * Only Changed Products: every product is checked and its content digested before the memory is
 * consulted; only the products the service has not confirmed as they are now are sent, the node
 * waits for their sessions, and then remembers the products of the sessions that finished without
 * errors (and, to say so next time, those that finished with errors). One output item per input
 * item says what became of its product; the first also carries the run's summary.
 */
async function uploadChangedProducts(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
	settings: ChangedProductsSettings,
): Promise<INodeExecutionData[]> {
	const source = context.getNodeParameter('source', 0) as string;
	const products = new Map<number, string>();
	const itemErrors = new Map<number, Error>();
	const fail = (itemIndex: number, error: Error) => {
		// Without Continue On Fail, bad input ends the run before anything is sent.
		if (!failures.continueOnFail) failures.output(error, [itemIndex]);
		itemErrors.set(itemIndex, error);
	};
	readProducts(context, items, settings.productField).forEach((read, itemIndex) => {
		if ('error' in read) fail(itemIndex, read.error);
		else products.set(itemIndex, read.product);
	});

	// One document per item is read and checked first: its digest is the content of its product.
	const documentOf = new Map<number, XmlDocument>();
	const contents = new Map<number, string>();
	if (source === 'items') {
		for (const itemIndex of products.keys())
			contents.set(itemIndex, itemContent(context, items[itemIndex], itemIndex));
	} else {
		for (const entry of await prepareDocuments(context, items, [...products.keys()])) {
			if (entry.document) {
				documentOf.set(entry.document.itemIndexes[0], entry.document);
				contents.set(entry.document.itemIndexes[0], entry.document.sha256);
			} else {
				fail(entry.itemIndexes[0], entry.error);
			}
		}
	}

	const entries: Entries = new Map();
	const checked: Array<[number, ProductEntry]> = [];
	for (const [itemIndex, content] of contents) {
		try {
			const product = products.get(itemIndex) as string;
			checked.push([itemIndex, await productEntry(context, itemIndex, endpoint, product, content)]);
		} catch (error) {
			fail(itemIndex, asNodeError(context, error, itemIndex));
		}
	}
	// Send All Products forgets only once the run has proven the password (see rememberRun).
	const recalled = settings.sendAll
		? checked.map(() => ({ unchanged: false, failedBefore: false }))
		: await recallProducts(
				context,
				checked.map(([, entry]) => entry),
			);
	checked.forEach(([itemIndex, entry], index) =>
		entries.set(itemIndex, { ...entry, reason: reasonOf(recalled[index]) }),
	);

	const toSend = [...entries]
		.filter(([, entry]) => entry.reason !== 'unchanged')
		.map(([itemIndex]) => itemIndex);
	const plans: Plan[] =
		source === 'items'
			? (await prepareDocuments(context, items, toSend)).map((entry) =>
					entry.document ? planUpload(context, entry.document, true) : entry,
				)
			: toSend.map((itemIndex) =>
					planUpload(context, documentOf.get(itemIndex) as XmlDocument, true),
				);

	if (settings.validateOnly)
		return await validatedOutput(context, items, failures, entries, itemErrors, plans);

	const slots = await uploadPlans(context, plans, failures, endpoint);
	const confirmed: ProductEntry[] = [];
	const refused: ProductEntry[] = [];
	const outcomeOf = new Map<number, { json: IDataObject; status?: string }>();
	for (const slot of slots) {
		const json = 'failure' in slot ? slot.failure.json : slot.uploaded.json;
		const itemIndexes = 'failure' in slot ? slot.itemIndexes : slot.uploaded.document.itemIndexes;
		const status =
			typeof json.status === 'string' && json.waitError === undefined ? json.status : undefined;
		for (const itemIndex of itemIndexes) {
			outcomeOf.set(itemIndex, { json, status });
			const entry = entries.get(itemIndex);
			if (entry && status === 'succeeded') confirmed.push(entry);
			if (entry && status === 'failed') refused.push(entry);
		}
	}
	const sessions = slots.flatMap((slot) => ('uploaded' in slot ? [slot.uploaded.json] : []));
	// An upload the service took proves the credential's password: only then is the memory written.
	if (sessions.length > 0) {
		const unchanged = [...entries.values()].filter((entry) => entry.reason === 'unchanged');
		await rememberRun(context, [...unchanged, ...confirmed], refused);
	}

	const summary: IDataObject = {
		products: items.length,
		sent: [...outcomeOf.values()].filter(({ json }) => json.sessionId !== undefined).length,
		unchanged: entries.size - toSend.length,
		sentAgainAfterFailure: toSend.filter(
			(itemIndex) => entries.get(itemIndex)?.reason === 'sentAgainAfterFailure',
		).length,
		invalid: itemErrors.size,
		sessions: sessions.length,
		sessionsConfirmed: sessions.filter((json) => json.status === 'succeeded').length,
		sessionsFailed: sessions.filter((json) => json.status === 'failed').length,
		sessionsUnconfirmed: sessions.filter(
			(json) => json.status !== 'succeeded' && json.status !== 'failed',
		).length,
	};
	if (toSend.length === 0) summary.message = nothingToSend(entries.size);
	return items.map((_, itemIndex) => {
		const entry = entries.get(itemIndex);
		const outcome = outcomeOf.get(itemIndex);
		let output: INodeExecutionData;
		if (!entry) {
			output = failures.output(
				itemErrors.get(itemIndex),
				[itemIndex],
				productJson(products.get(itemIndex)),
			);
		} else if (!outcome) {
			output = {
				json: { product: entry.product, sent: false, reason: entry.reason },
				pairedItem: { item: itemIndex },
			};
		} else {
			output = {
				json: {
					product: entry.product,
					sent: outcome.json.sessionId !== undefined,
					reason: entry.reason,
					...outcome.json,
					confirmed: outcome.status === 'succeeded',
				},
				pairedItem: { item: itemIndex },
			};
		}
		if (itemIndex === 0) output.json = { ...output.json, run: summary };
		return output;
	});
}

function productJson(product: string | undefined): IDataObject {
	return product === undefined ? {} : { product };
}

function nothingToSend(unchanged: number): string {
	return `Nothing to send: the service has confirmed all ${unchanged} products as they are now. No request was made.`;
}

/** Validate Only: what a real run would send and spend, with nothing sent. */
async function validatedOutput(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	entries: Entries,
	itemErrors: Map<number, Error>,
	plans: Plan[],
): Promise<INodeExecutionData[]> {
	const failedPlans = plans.flatMap((plan) => ('error' in plan ? [plan] : []));
	// Without Continue On Fail, a document that cannot be built fails the run, as a real run would.
	for (const plan of failures.continueOnFail ? [] : failedPlans)
		failures.output(plan.error, plan.itemIndexes);
	for (const plan of failedPlans)
		for (const itemIndex of plan.itemIndexes) itemErrors.set(itemIndex, plan.error);

	const documents = plans.length - failedPlans.length;
	// Each upload is one request, and each session is read at least once before it is confirmed.
	const requests = 2 * documents;
	const credentials = await getServiceCredentials(context, 0);
	const wouldSend = [...entries].filter(
		([itemIndex, entry]) => entry.reason !== 'unchanged' && !itemErrors.has(itemIndex),
	);
	const summary: IDataObject = {
		validateOnly: true,
		products: items.length,
		wouldSend: wouldSend.length,
		unchanged: [...entries.values()].filter((entry) => entry.reason === 'unchanged').length,
		sentAgainAfterFailure: wouldSend.filter(([, entry]) => entry.reason === 'sentAgainAfterFailure')
			.length,
		invalid: itemErrors.size,
		documents,
		requests,
		bucketSeconds: bucketSecondsFor(credentials, requests),
	};
	if (documents === 0) summary.message = nothingToSend(summary.unchanged as number);
	return items.map((_, itemIndex) => {
		const entry = entries.get(itemIndex);
		const error = itemErrors.get(itemIndex);
		const output: INodeExecutionData =
			error || !entry
				? failures.output(error, [itemIndex], productJson(entry?.product))
				: {
						json: {
							product: entry.product,
							wouldSend: entry.reason !== 'unchanged',
							reason: entry.reason,
						},
						pairedItem: { item: itemIndex },
					};
		if (itemIndex === 0) output.json = { ...output.json, run: summary };
		return output;
	});
}
