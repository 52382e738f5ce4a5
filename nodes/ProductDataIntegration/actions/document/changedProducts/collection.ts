import { randomUUID } from 'crypto';
import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { mapWithPauses } from '../../../../shared/pauses';
import type { ProductMemory } from '../../../../shared/ports';
import { isUnfollowedSession, waitForSessions, type WaitResult } from '../../../../shared/sessions';
import type { CustomerOverride } from '../../../../shared/transport';
import { buildXmlDocument } from '../../../../shared/xml/build';
import { waitedOutcome, type WaitSettings } from '../../waiting';
import { checkAndHash, type XmlDocument } from '../documents';
import { documentJson, sendDocument, type UploadEndpoint } from '../sendDocuments';
import { CLAIM_MS, failedValue, memoryUnavailable } from './partMemory';

/**
 * Collected Into Full Documents: the changed products of many runs (the pages of a night, on any
 * worker) wait together in the memory's collection (ProductMemory.collect) as the value to remember
 * once the service confirms them and their XML element; a run that fills a document of Products per
 * Document takes and sends it, and Send Collected Products sends the rest. A night of C changed
 * products so costs ⌈C/B⌉ uploads, not one per page.
 */

/**
 * How long collected products wait to be sent: a night whose Send Collected Products never ran
 * leaves them for a week at most; they are then neither collected nor remembered, so the next run
 * that holds them finds them changed and collects them again.
 */
export const COLLECT_MS = 7 * 24 * 3600 * 1000;

/** How every document of a collection is built and sent: the same for all its products. */
export interface CollectedDocuments {
	endpoint: UploadEndpoint;
	rootElement: string;
	declaration: boolean;
	contentType: string;
	customer?: CustomerOverride;
}

/** What a collection holds of a product: the value to remember once confirmed, and its element. */
export function stagedProduct(value: string, xml: string): string {
	return `${value}\n${xml}`;
}

function readStaged(staged: string): { value: string; xml: string } {
	const end = staged.indexOf('\n');
	return { value: staged.slice(0, end), xml: staged.slice(end + 1) };
}

function readDocuments(documents: string): CollectedDocuments {
	return JSON.parse(documents) as CollectedDocuments;
}

/** How the sessions of collected documents are awaited (the item's Timeout and Include Error Message). */
export type CollectedWait = Omit<WaitSettings, 'customer'>;

/** What one run sent of a collection. */
export interface CollectedSent {
	/** One per document uploaded (or that failed to be): its session and outcome. */
	documents: IDataObject[];
	/** The output of the uploaded document each product key went in. */
	documentOf: Map<string, IDataObject>;
	/** Said when the memory could not be written for all that was sent. */
	note?: string;
}

interface Taken {
	documents: CollectedDocuments;
	products: Array<[key: string, staged: string]>;
}

/** An uploaded document as the run keeps it while its session is awaited: no XML. */
interface Uploaded {
	json: IDataObject;
	customer?: CustomerOverride;
	/** Each product's key and the value to remember once the service confirmed it. */
	values: Array<[key: string, value: string]>;
}

/**
 * Takes documents of `productsPerDocument` from the collection while at least `least` products
 * wait and sends them one by one (the run holds one document's XML at a time), then awaits their
 * sessions together and remembers what the service confirmed or refused. A document that could not
 * be uploaded goes back into the collection and ends the taking; one whose session could not be
 * followed is neither remembered nor collected, so its products go again next time.
 */
export async function sendCollected(
	context: IExecuteFunctions,
	memory: ProductMemory,
	productsPerDocument: number,
	least: number,
	wait: CollectedWait,
): Promise<CollectedSent> {
	const runId = randomUUID();
	const sent: CollectedSent = { documents: [], documentOf: new Map() };
	const uploaded: Uploaded[] = [];
	const taken: string[] = [];
	const notes: string[] = [];
	for (let position = 0; ; position++) {
		const next = await memory
			.take(runId, Date.now() + CLAIM_MS, least, productsPerDocument)
			.catch((error: unknown) => {
				throw memoryUnavailable(context, error);
			});
		if (!next) break;
		const document: Taken = { documents: readDocuments(next.documents), products: next.products };
		const json = await uploadCollected(context, document, position, wait.itemIndex).catch(
			(error: Error) => ({ products: document.products.length, error: error.message }),
		);
		sent.documents.push(json);
		if ('error' in json) {
			await putBack(memory, runId, document, notes);
			break;
		}
		for (const [key] of document.products) {
			sent.documentOf.set(key, json);
			taken.push(key);
		}
		uploaded.push({
			json,
			customer: document.documents.customer,
			values: await mapWithPauses(document.products, ([key, staged]): [string, string] => [
				key,
				readStaged(staged).value,
			]),
		});
	}
	// A wait that ends for all (a poll's deadline) leaves the sessions unconfirmed, never unlisted.
	const outcomes = await waitForSessions(
		context,
		uploaded.map(({ json, customer }) => ({
			...wait,
			sessionId: String(json.sessionId),
			customer,
		})),
	).catch((error: Error) =>
		uploaded.map(({ json }) => ({ sessionId: String(json.sessionId), error })),
	);
	const entries = await rememberOutcomes(uploaded, outcomes);
	await settle(memory, runId, entries, taken, notes);
	if (notes.length > 0) sent.note = notes.join(' ');
	return sent;
}

/** A document that could not be uploaded goes back into the collection, for a later run. */
async function putBack(
	memory: ProductMemory,
	runId: string,
	{ documents, products }: Taken,
	notes: string[],
): Promise<void> {
	const problem = await memory
		.collect(products, runId, JSON.stringify(documents), Date.now() + COLLECT_MS)
		.then(
			(answer) => ('otherDocuments' in answer ? 'the collection now holds other documents' : ''),
			(error: Error) => error.message,
		);
	if (problem)
		notes.push(
			`${products.length} products that were not uploaded could not be collected again (${problem}): they go in a later run.`,
		);
}

async function uploadCollected(
	context: IExecuteFunctions,
	{ documents, products }: Taken,
	position: number,
	itemIndex: number,
): Promise<IDataObject> {
	const buffer = Buffer.from(
		buildXmlDocument(
			await mapWithPauses(products, ([, staged]) => ({ xml: readStaged(staged).xml })),
			{
				rootElement: documents.rootElement,
				declaration: documents.declaration,
			},
		),
		'utf8',
	);
	const { problem, sha256 } = await checkAndHash(buffer, true);
	if (problem) {
		throw new NodeOperationError(
			context.getNode(),
			`The collected document is not well-formed: ${problem.message} (line ${problem.line}, column ${problem.column})`,
			{ itemIndex },
		);
	}
	const document: XmlDocument = {
		position,
		itemIndexes: [itemIndex],
		fileName: null,
		buffer,
		bytes: buffer.length,
		sha256,
		validation: 'passed',
	};
	const upload = await sendDocument(
		context,
		document,
		documents.endpoint,
		documents.contentType,
		documents.customer,
	);
	return {
		sessionId: upload.sessionId,
		products: products.length,
		...documentJson(document),
		endpoint: documents.endpoint,
		uploadedAt: upload.uploadedAt,
	};
}

/** Adds each session's outcome to its document's output; answers the entries to remember. */
async function rememberOutcomes(
	uploaded: Uploaded[],
	outcomes: WaitResult[],
): Promise<Array<[string, string]>> {
	const entries: Array<[string, string]> = [];
	for (const [index, { json, values }] of uploaded.entries()) {
		const outcome = outcomes[index];
		if (isUnfollowedSession(outcome)) {
			json.waitError = outcome.error.message;
			continue;
		}
		Object.assign(json, waitedOutcome(outcome));
		if (outcome.status === 'succeeded') entries.push(...values);
		if (outcome.status === 'failed')
			entries.push(
				...(await mapWithPauses(values, ([key, value]): [string, string] => [
					key,
					failedValue(value),
				])),
			);
	}
	return entries;
}

/**
 * Remembers what the service confirmed or refused and lets go of every product the run took and
 * uploaded. Notes when Redis could not be told: what was sent is in the output all the same.
 */
async function settle(
	memory: ProductMemory,
	runId: string,
	entries: Array<[string, string]>,
	taken: string[],
	notes: string[],
): Promise<void> {
	await memory.remember(entries, runId, taken).then(
		(written) => {
			if (written < entries.length)
				notes.push(
					`${entries.length - written} products not remembered: this run held them longer than ${CLAIM_MS / 3_600_000} hours. They go again in a later run.`,
				);
		},
		(error: Error) =>
			notes.push(
				`Not remembered: Redis could not be asked (${error.message}). What this run sent goes again in a later run.`,
			),
	);
}
