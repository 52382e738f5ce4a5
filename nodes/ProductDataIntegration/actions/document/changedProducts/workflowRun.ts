import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { mapWithPauses } from '../../../../shared/pauses';
import { cleanServiceText } from '../../../../shared/transport';
import type { ItemFailures } from '../../itemErrors';
import { uploadPlans, type UploadEndpoint } from '../sendDocuments';
import { uploadSettings } from '../uploadSettings';
import { runOutput, sessionOutcomes, validatedOutput } from './outputs';
import { confirmedValue } from './partMemory';
import { checkProducts, planChanged, type RecallProducts } from './run';
import type { ChangedProductsSettings } from './settings';

/** What confirmedValue makes: a letter and 32 hexadecimal digits. */
const VERSION = /^c[0-9a-f]{32}$/;

/**
 * Only Changed Products with the memory kept by the workflow: each item brings, in the Known
 * Version Field, the version this node output for its product when the service last confirmed it
 * (kept by the workflow, e.g. in a Data Table, as photos keep their Known MD5), and each output
 * item whose product the service confirmed, or that was unchanged, hands back the version to keep.
 * Neither n8n's store nor Redis is asked, so it works in every n8n and edition, and a run costs
 * time in its own products only. The version is a digest under the holder's key: another
 * password, customer node or route makes every product new. What only a shared memory can do is
 * left out: keeping runs that send the same product apart, collecting, counting missing products.
 */
export async function uploadChangedKnownToWorkflow(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
	settings: ChangedProductsSettings & { knownVersionField: string },
): Promise<INodeExecutionData[]> {
	const field = settings.knownVersionField;
	const knownVersions: string[] = [];
	const versionErrors = new Map<number, Error>();
	// The version is no part of the product: what is sent and digested goes without it.
	const products = await mapWithPauses(items, (item, itemIndex) => {
		const known = knownVersionOf(context, item.json[field], field, itemIndex);
		if (known instanceof Error) {
			if (!failures.continueOnFail) failures.output(known, [itemIndex]);
			versionErrors.set(itemIndex, known);
		}
		knownVersions[itemIndex] = typeof known === 'string' ? known : '';
		if (!(field in item.json)) return item;
		const json = { ...item.json };
		delete json[field];
		return { ...item, json };
	});
	const recall: RecallProducts = async (entries, itemIndexes) => ({
		recalled: await mapWithPauses(entries, (entry, index) => ({
			unchanged: !settings.sendAll && knownVersions[itemIndexes[index]] === confirmedValue(entry),
			failedBefore: false,
		})),
	});
	const upload = uploadSettings(context);
	const { checked } = await checkProducts(
		context,
		products,
		failures,
		endpoint,
		upload,
		settings,
		recall,
	);
	for (const [itemIndex, error] of versionErrors) {
		checked.entries.delete(itemIndex);
		checked.itemErrors.set(itemIndex, error);
	}
	const plans = await planChanged(context, products, upload, checked);
	if (settings.validateOnly)
		return await validatedOutput(
			context,
			products,
			failures,
			checked,
			plans,
			{},
			settings.outputUnchanged,
		);
	const slots = await uploadPlans(context, plans, failures, endpoint);
	const outcomes = await sessionOutcomes(slots, checked.entries);
	return await runOutput(
		products,
		failures,
		checked,
		outcomes,
		{},
		settings.outputUnchanged,
		confirmedValue,
	);
}

/** An item's known version: empty when the product was never confirmed, or an error naming the item. */
function knownVersionOf(
	context: IExecuteFunctions,
	value: unknown,
	field: string,
	itemIndex: number,
): string | NodeOperationError {
	if (value === undefined || value === null || value === '') return '';
	if (typeof value === 'string' && VERSION.test(value)) return value;
	const shown =
		typeof value === 'string' ? `"${cleanServiceText(value, 60)}"` : `a ${typeof value}`;
	return new NodeOperationError(
		context.getNode(),
		`The known version field "${field}" of item ${itemIndex} is ${shown}, not a version this node output`,
		{
			itemIndex,
			description:
				'Nothing was sent for it. Keep the "version" of each output item and hand it back in this field, or leave the field empty for a product never confirmed (Known Version Field).',
		},
	);
}
