import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { forEachWithPauses, mapWithPauses, pauseWhenDue } from '../../../../shared/pauses';
import { asNodeError, type ItemFailures } from '../../itemErrors';
import { prepareDocuments, type XmlDocument } from '../documents';
import { planUpload, uploadPlans, type Plan, type UploadEndpoint } from '../sendDocuments';
import { uploadSettings, type UploadSettings } from '../uploadSettings';
import {
	aloneInMemory,
	identitiesKeptMarker,
	MEMORY_LEFT_AS_FOUND,
	MISSING_WITH_SEND_ALL,
	nothingRecalled,
	overlapRefusal,
	recallProducts,
	rememberRun,
	type ProductEntry,
	type Recall,
} from './memory';
import {
	noCheckedProducts,
	runOutput,
	sessionOutcomes,
	validatedOutput,
	type CheckedProducts,
} from './outputs';
import { itemContent, productEntry, readProducts, reasonOf } from './products';
import type { ChangedProductsSettings } from './settings';

/**
 * Only Changed Products: every product is checked and its content digested before the memory is
 * consulted; only the products the service has not confirmed as they are now are sent, the node
 * waits for their sessions, and then remembers the products of the sessions that finished without
 * errors (and, to say so next time, those that finished with errors). One output item per input
 * item says what became of its product (without Output Unchanged Products, only per product sent
 * or invalid); the first also carries the run's summary.
 */
export async function uploadChangedProducts(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
	settings: ChangedProductsSettings,
): Promise<INodeExecutionData[]> {
	const output = await aloneInMemory(
		context,
		async (lost) => await syncChangedProducts(context, items, failures, endpoint, settings, lost),
	);
	if (output !== null) return output;
	// Each item says it was not sent, rather than going on as it came.
	const refusal = overlapRefusal(context);
	return items.map((_, itemIndex) => failures.output(refusal, [itemIndex]));
}

async function syncChangedProducts(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
	settings: ChangedProductsSettings,
	lost: AbortSignal,
): Promise<INodeExecutionData[]> {
	const upload = uploadSettings(context);
	const identitiesKept = settings.countMissing ? await identitiesKeptMarker(context) : undefined;
	// Send All Products forgets only once the run has proven the password (see rememberRun).
	const recall: RecallProducts = async (entries) =>
		settings.sendAll
			? {
					recalled: await nothingRecalled(entries),
					putBack: noPutBack,
					missing: identitiesKept === undefined ? undefined : MISSING_WITH_SEND_ALL,
				}
			: await recallProducts(context, entries, lost, identitiesKept);
	const { checked, putBack } = await checkProducts(
		context,
		items,
		failures,
		endpoint,
		upload,
		settings,
		recall,
	);
	// The list keeps what the checks recorded until it is written again or put back.
	let written = false;
	try {
		const plans = await planChanged(context, items, upload, checked);
		if (settings.validateOnly)
			return await validatedOutput(
				context,
				items,
				failures,
				checked,
				plans,
				memoryNote(lost),
				settings.outputUnchanged,
			);

		const slots = await uploadPlans(context, plans, failures, endpoint);
		const outcomes = await sessionOutcomes(slots, checked.entries);
		// An upload the service took proves the credential's password: only then is the memory written.
		if (outcomes.sessions.length > 0) {
			const unchanged: ProductEntry[] = [];
			await forEachWithPauses(checked.entries.values(), (entry) => {
				if (entry.reason === 'unchanged') unchanged.push(entry);
			});
			await rememberRun(
				context,
				[...unchanged, ...outcomes.confirmed],
				outcomes.refused,
				lost,
				identitiesKept,
			);
			written = true;
		}
		return await runOutput(
			items,
			failures,
			checked,
			outcomes,
			memoryNote(lost),
			settings.outputUnchanged,
		);
	} finally {
		if (!written) await putBack();
	}
}

/** What the run's summary says of the memory: only when the run left it as it found it. */
function memoryNote(lost: AbortSignal): IDataObject {
	return lost.aborted ? { memory: MEMORY_LEFT_AS_FOUND } : {};
}

async function noPutBack(): Promise<void> {}

/** What a memory says of the entries of a run (of the items `itemIndexes`), in their order. */
export type RecallProducts = (
	entries: ProductEntry[],
	itemIndexes: number[],
) => Promise<Omit<Recall, 'putBack'> & Partial<Pick<Recall, 'putBack'>>>;

/**
 * Each item's product and content, checked, and what the memory (`recall`) says of it. Without
 * Continue On Fail, bad input ends the run before anything is sent.
 */
export async function checkProducts(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
	upload: UploadSettings,
	settings: ChangedProductsSettings,
	recall: RecallProducts,
): Promise<{
	checked: CheckedProducts;
	putBack: () => Promise<void>;
}> {
	const checked = noCheckedProducts();
	const fail = (itemIndex: number, error: Error) => {
		if (!failures.continueOnFail) failures.output(error, [itemIndex]);
		checked.itemErrors.set(itemIndex, error);
	};
	await forEachWithPauses(
		await readProducts(context, items, settings.productField, !settings.partOfCatalogue),
		(read, itemIndex) => {
			if ('error' in read) fail(itemIndex, read.error);
			else checked.products.set(itemIndex, read.product);
		},
	);

	const contents = await readContents(context, items, upload, checked, fail);
	const found: Array<[number, ProductEntry]> = [];
	for (const [itemIndex, content] of contents) {
		await pauseWhenDue();
		try {
			const product = checked.products.get(itemIndex) as string;
			const customer = upload.customerOf(itemIndex);
			found.push([
				itemIndex,
				await productEntry(context, itemIndex, endpoint, product, content, customer),
			]);
		} catch (error) {
			fail(itemIndex, asNodeError(context, error, itemIndex));
		}
	}
	const { recalled, putBack, missing } = await recall(
		await mapWithPauses(found, ([, entry]) => entry),
		await mapWithPauses(found, ([itemIndex]) => itemIndex),
	);
	await forEachWithPauses(found, ([itemIndex, entry], index) =>
		checked.entries.set(itemIndex, { ...entry, reason: reasonOf(recalled[index]) }),
	);
	checked.missing = { ...missing };
	return { checked, putBack: putBack ?? noPutBack };
}

/**
 * The content of each product: one document per item is read and checked first, its digest is the
 * content; for Build From Items, a digest of what the item becomes.
 */
async function readContents(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	upload: UploadSettings,
	checked: CheckedProducts,
	fail: (itemIndex: number, error: Error) => void,
): Promise<Map<number, string>> {
	const contents = new Map<number, string>();
	if (upload.source === 'items') {
		for (const itemIndex of checked.products.keys()) {
			await pauseWhenDue();
			contents.set(itemIndex, itemContent(context, items[itemIndex], itemIndex));
		}
		return contents;
	}
	for (const entry of await prepareDocuments(context, items, upload, [
		...checked.products.keys(),
	])) {
		if (entry.document) {
			checked.documentOf.set(entry.document.itemIndexes[0], entry.document);
			contents.set(entry.document.itemIndexes[0], entry.document.sha256);
		} else {
			fail(entry.itemIndexes[0], entry.error);
		}
	}
	return contents;
}

/** The documents of the products to send. */
export async function planChanged(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	upload: UploadSettings,
	checked: CheckedProducts,
): Promise<Plan[]> {
	const toSend: number[] = [];
	await forEachWithPauses(checked.entries, ([itemIndex, entry]) => {
		if (entry.reason !== 'unchanged') toSend.push(itemIndex);
	});
	if (upload.source !== 'items') {
		return await mapWithPauses(toSend, (itemIndex) =>
			planUpload(context, upload, checked.documentOf.get(itemIndex) as XmlDocument, true),
		);
	}
	return await mapWithPauses(await prepareDocuments(context, items, upload, toSend), (entry) =>
		entry.document ? planUpload(context, upload, entry.document, true) : entry,
	);
}
