import { randomUUID } from 'crypto';
import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { forEachWithPauses } from '../../../../shared/pauses';
import type { ProductMemory } from '../../../../shared/ports';
import type { ItemFailures } from '../../itemErrors';
import { uploadPlans, type UploadEndpoint } from '../sendDocuments';
import { uploadSettings, type UploadSettings } from '../uploadSettings';
import { nothingRecalled } from './memory';
import { collectChanged } from './collectedRun';
import { runOutput, sessionOutcomes, validatedOutput, type CheckedProducts } from './outputs';
import {
	beingSentElsewhere,
	CLAIM_MS,
	memoryUnavailable,
	partEntries,
	productKey,
	productMemoryOf,
	type ProductIds,
	recallPart,
} from './partMemory';
import { checkProducts, planChanged, type RecallProducts } from './run';
import type { ChangedProductsSettings } from './settings';

/**
 * Only Changed Products for a run that holds part of the catalogue: its products are looked up in
 * the memory per product (see partMemory.ts), the changed ones claimed against other runs of the
 * node (runs of the node may go on side by side, on other products: pages on several workers),
 * sent, their sessions awaited, and what the service confirmed or refused remembered. A product
 * that another run is sending fails its item; the others go on.
 */
export async function uploadChangedPart(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
	settings: ChangedProductsSettings,
): Promise<INodeExecutionData[]> {
	const { memory, ids } = await productMemoryOf(context, settings.collect?.memoryName);
	const upload = uploadSettings(context);
	// A collecting run marks its products seen in the night, for Send Collected Products to count
	// the products no page held; Validate Only leaves the memory as it is.
	const seen = settings.collect !== undefined && !settings.validateOnly;
	const recall: RecallProducts = async (entries) => {
		if (!settings.sendAll) return { recalled: await recallPart(context, memory, entries, seen) };
		// Send All Products recalls nothing, but its products are seen all the same.
		if (seen) await recallPart(context, memory, entries, seen);
		return { recalled: await nothingRecalled(entries) };
	};
	const { checked } = await checkProducts(
		context,
		items,
		failures,
		endpoint,
		upload,
		settings,
		recall,
	);
	if (settings.validateOnly) {
		// Collected products go in the collection's documents, which no single run can foresee.
		const plans = settings.collect ? [] : await planChanged(context, items, upload, checked);
		return await validatedOutput(
			context,
			items,
			failures,
			checked,
			plans,
			settings.collect ? { memoryName: settings.collect.memoryName, collecting: true } : {},
			settings.outputUnchanged,
		);
	}

	const runId = randomUUID();
	const claimed: string[] = [];
	const released = { done: false };
	try {
		await claimToSend(context, memory, checked, failures, runId, claimed);
		const { collect } = settings;
		if (collect) {
			// Collected products' claims pass to the collection; the rest are let go below.
			return await collectChanged(
				context,
				items,
				failures,
				endpoint,
				upload,
				{ memory, ids },
				checked,
				runId,
				{ ...settings, collect },
			);
		}
		return await sendChanged(context, items, failures, endpoint, upload, { memory, ids }, checked, {
			runId,
			claimed,
			released,
			outputUnchanged: settings.outputUnchanged,
		});
	} finally {
		// A claim Redis does not hear of runs out on its own (CLAIM_MS).
		if (!released.done) await memory.remember([], runId, claimed).catch(() => undefined);
	}
}

/** With Each Run: the run's changed products go in documents of its own, awaited and remembered. */
async function sendChanged(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
	upload: UploadSettings,
	{ memory, ids }: { memory: ProductMemory; ids: ProductIds },
	checked: CheckedProducts,
	run: { runId: string; claimed: string[]; released: { done: boolean }; outputUnchanged: boolean },
): Promise<INodeExecutionData[]> {
	const plans = await planChanged(context, items, upload, checked);
	const slots = await uploadPlans(context, plans, failures, endpoint);
	const outcomes = await sessionOutcomes(slots, checked.entries);
	const entries = await partEntries(outcomes.confirmed, outcomes.refused, ids);
	// What was uploaded reaches the output whatever Redis answers now.
	const note = await memory.remember(entries, run.runId, run.claimed).then(
		(written) =>
			written < entries.length
				? {
						memory: `${entries.length - written} products not remembered: this run held them longer than ${CLAIM_MS / 3_600_000} hours, so another run may have sent them since. They go again in a later run.`,
					}
				: {},
		(error: unknown) => ({
			memory: `Not remembered: Redis could not be asked (${(error as Error).message}). What this run sent goes again in a later run.`,
		}),
	);
	run.released.done = true;
	return await runOutput(items, failures, checked, outcomes, note, run.outputUnchanged);
}

/**
 * Claims the products to send (into `claimed`); a product another run of the node is sending
 * fails its item, and a run that would pass the memory's bound is refused before any request.
 */
async function claimToSend(
	context: IExecuteFunctions,
	memory: ProductMemory,
	checked: CheckedProducts,
	failures: ItemFailures,
	runId: string,
	claimed: string[],
): Promise<void> {
	const toSend: Array<[number, string]> = [];
	await forEachWithPauses(checked.entries, ([itemIndex, entry]) => {
		if (entry.reason !== 'unchanged') toSend.push([itemIndex, productKey(entry)]);
	});
	const answer = await memory
		.claim(
			toSend.map(([, key]) => key),
			runId,
			Date.now() + CLAIM_MS,
		)
		.catch((error: unknown) => {
			throw memoryUnavailable(context, error);
		});
	if (answer === 'full') {
		throw new NodeOperationError(
			context.getNode(),
			`Only Changed Products remembers at most ${memory.bound} products per node, and this run's new products would pass that`,
			{
				itemIndex: 0,
				description:
					'Nothing was sent. Split the catalogue over several Upload nodes, or turn off Only Changed Products.',
			},
		);
	}
	for (const [, key] of toSend) if (!answer.taken.has(key)) claimed.push(key);
	for (const [itemIndex, key] of toSend) {
		if (!answer.taken.has(key)) continue;
		const product = checked.entries.get(itemIndex)?.product ?? '';
		const error = beingSentElsewhere(context, product, itemIndex);
		checked.entries.delete(itemIndex);
		checked.itemErrors.set(itemIndex, error);
		if (!failures.continueOnFail) failures.output(error, [itemIndex]);
	}
}
