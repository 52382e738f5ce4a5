import type {
	ICredentialDataDecryptedObject,
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
} from 'n8n-workflow';

import { forEachWithPauses, pauseWhenDue } from '../../../../shared/pauses';
import { bucketTerms, getServiceCredentials } from '../../../../shared/transport';
import type { ItemFailures } from '../../itemErrors';
import type { XmlDocument } from '../documents';
import type { Plan, Slot } from '../sendDocuments';
import type { ProductEntry } from './memory';
import type { ProductReason } from './products';

/** The entries of one run's products, by input item. */
export type Entries = Map<number, ProductEntry & { reason: ProductReason }>;

/** What the checks of a run found, by input item. */
export interface CheckedProducts {
	products: Map<number, string>;
	itemErrors: Map<number, Error>;
	entries: Entries;
	/** The document read for a product's content (not for Build From Items). */
	documentOf: Map<number, XmlDocument>;
	/** For the run's summary: `missing` (and why not counted), with Count Missing Products only. */
	missing: IDataObject;
}

/** What the checks of a run found before they start: nothing. */
export function noCheckedProducts(): CheckedProducts {
	return {
		products: new Map(),
		itemErrors: new Map(),
		entries: new Map(),
		documentOf: new Map(),
		missing: {},
	};
}

/** What the sessions of a run made of its products. */
export interface SessionOutcomes {
	outcomeOf: Map<number, { json: IDataObject; status?: string }>;
	/** The sessions' outputs, one per uploaded document. */
	sessions: IDataObject[];
	confirmed: ProductEntry[];
	refused: ProductEntry[];
}

export async function sessionOutcomes(slots: Slot[], entries: Entries): Promise<SessionOutcomes> {
	const outcomes: SessionOutcomes = {
		outcomeOf: new Map(),
		sessions: [],
		confirmed: [],
		refused: [],
	};
	for (const slot of slots) {
		const json = 'failure' in slot ? slot.failure.json : slot.uploaded.json;
		const itemIndexes = 'failure' in slot ? slot.itemIndexes : slot.uploaded.document.itemIndexes;
		if ('uploaded' in slot) outcomes.sessions.push(json);
		const status =
			typeof json.status === 'string' && json.waitError === undefined ? json.status : undefined;
		// One document may carry a whole catalogue.
		for (const itemIndex of itemIndexes) {
			await pauseWhenDue();
			outcomes.outcomeOf.set(itemIndex, { json, status });
			const entry = entries.get(itemIndex);
			if (entry && status === 'succeeded') outcomes.confirmed.push(entry);
			if (entry && status === 'failed') outcomes.refused.push(entry);
		}
	}
	return outcomes;
}

/**
 * One output item per input item, or, without `outputUnchanged`, per input item whose product was
 * sent or is invalid; the first also carries the run's summary.
 */
export async function runOutput(
	items: INodeExecutionData[],
	failures: ItemFailures,
	{ products, itemErrors, entries, missing }: CheckedProducts,
	{ outcomeOf, sessions }: SessionOutcomes,
	memory: IDataObject,
	outputUnchanged: boolean,
	/** With the memory kept by the workflow: the version each confirmed or unchanged product hands back. */
	versionOf?: (entry: ProductEntry) => string,
): Promise<INodeExecutionData[]> {
	const version = (entry: ProductEntry, confirmed: boolean): IDataObject =>
		versionOf && confirmed ? { version: versionOf(entry) } : {};
	const toSend = [...entries.values()].filter((entry) => entry.reason !== 'unchanged');
	const summary: IDataObject = {
		products: items.length,
		sent: [...outcomeOf.values()].filter(({ json }) => json.sessionId !== undefined).length,
		unchanged: entries.size - toSend.length,
		sentAgainAfterFailure: toSend.filter((entry) => entry.reason === 'sentAgainAfterFailure')
			.length,
		invalid: itemErrors.size,
		sessions: sessions.length,
		sessionsConfirmed: sessions.filter((json) => json.status === 'succeeded').length,
		sessionsFailed: sessions.filter((json) => json.status === 'failed').length,
		sessionsUnconfirmed: sessions.filter(
			(json) => json.status !== 'succeeded' && json.status !== 'failed',
		).length,
		...missing,
		...memory,
	};
	if (toSend.length === 0) summary.message = nothingToSend(entries.size);
	const outputs: INodeExecutionData[] = [];
	await forEachWithPauses(items, (_, itemIndex) => {
		const entry = entries.get(itemIndex);
		if (!outputUnchanged && entry?.reason === 'unchanged') return;
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
				json: {
					product: entry.product,
					sent: false,
					reason: entry.reason,
					...version(entry, entry.reason === 'unchanged'),
				},
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
					...version(entry, outcome.status === 'succeeded'),
				},
				pairedItem: { item: itemIndex },
			};
		}
		outputs.push(output);
	});
	return withSummary(items, outputs, summary);
}

/**
 * The run's summary on the first output item; when no item is left, on an item of its own, paired
 * with the first input item.
 */
function withSummary(
	items: INodeExecutionData[],
	outputs: INodeExecutionData[],
	summary: IDataObject,
): INodeExecutionData[] {
	const [first] = outputs;
	if (first) first.json = { ...first.json, run: summary };
	else if (items.length > 0) outputs.push({ json: { run: summary }, pairedItem: { item: 0 } });
	return outputs;
}

function productJson(product: string | undefined): IDataObject {
	return product === undefined ? {} : { product };
}

function nothingToSend(unchanged: number): string {
	return `Nothing to send: the service has confirmed all ${unchanged} products as they are now. No request was made.`;
}

/** How long the account's bucket takes for `requests` requests, from an empty bucket. */
function bucketSecondsFor(credentials: ICredentialDataDecryptedObject, requests: number): number {
	const { capacity, intervalMs } = bucketTerms(credentials);
	return (Math.max(0, requests - capacity) * intervalMs) / 1000;
}
/** Validate Only: what a real run would send and spend, with nothing sent. */
export async function validatedOutput(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	{ entries, itemErrors, missing }: CheckedProducts,
	plans: Plan[],
	memory: IDataObject,
	outputUnchanged: boolean,
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
		...missing,
		...memory,
	};
	if (wouldSend.length === 0) summary.message = nothingToSend(summary.unchanged as number);
	const outputs: INodeExecutionData[] = [];
	await forEachWithPauses(items, (_, itemIndex) => {
		const entry = entries.get(itemIndex);
		const error = itemErrors.get(itemIndex);
		if (error || !entry) {
			outputs.push(failures.output(error, [itemIndex], productJson(entry?.product)));
			return;
		}
		if (!outputUnchanged && entry.reason === 'unchanged') return;
		outputs.push({
			json: {
				product: entry.product,
				wouldSend: entry.reason !== 'unchanged',
				reason: entry.reason,
			},
			pairedItem: { item: itemIndex },
		});
	});
	return withSummary(items, outputs, summary);
}
