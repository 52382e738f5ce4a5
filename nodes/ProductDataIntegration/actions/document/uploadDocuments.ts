import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { pairedItems, type ItemFailures } from '../itemErrors';
import { prepareDocuments } from './documents';
import {
	planUpload,
	uploadPlans,
	type Plan,
	type Slot,
	type UploadEndpoint,
} from './sendDocuments';
import { uploadSettings } from './uploadSettings';

/**
 * Upload and Upload Custom XML without Only Changed Products: every document is read and checked, and the options of its item
 * read, before anything is sent; then the documents are uploaded one by one, then (optionally) all
 * their sessions are awaited together.
 */
export async function uploadDocuments(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
): Promise<INodeExecutionData[]> {
	const settings = uploadSettings(context);
	const plans = (await prepareDocuments(context, items, settings)).map(
		(entry): Plan => (entry.document ? planUpload(context, settings, entry.document) : entry),
	);
	const slots = await uploadPlans(context, plans, failures, endpoint);
	return slots.map(slotOutput);
}

function slotOutput(slot: Slot): INodeExecutionData {
	if ('failure' in slot) return slot.failure;
	const { document, json } = slot.uploaded;
	return { json, pairedItem: pairedItems(document.itemIndexes) };
}
