import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemFailures } from '../itemErrors';
import { uploadChangedPart } from './changedProducts/partRun';
import { uploadChangedProducts } from './changedProducts/run';
import { changedProductsSettings } from './changedProducts/settings';
import type { UploadEndpoint } from './sendDocuments';
import { uploadDocuments } from './uploadDocuments';

/** Upload and Upload Custom XML: Only Changed Products has a run of its own, per catalogue or part. */
export async function executeUpload(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
): Promise<INodeExecutionData[]> {
	const onlyChanged = changedProductsSettings(context);
	if (!onlyChanged) return await uploadDocuments(context, items, failures, endpoint);
	return onlyChanged.partOfCatalogue
		? await uploadChangedPart(context, items, failures, endpoint, onlyChanged)
		: await uploadChangedProducts(context, items, failures, endpoint, onlyChanged);
}
