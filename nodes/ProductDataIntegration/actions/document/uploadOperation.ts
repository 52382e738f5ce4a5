import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ItemFailures } from '../itemErrors';
import { uploadChangedPart } from './changedProducts/partRun';
import { uploadChangedProducts } from './changedProducts/run';
import { changedProductsSettings } from './changedProducts/settings';
import { uploadChangedKnownToWorkflow } from './changedProducts/workflowRun';
import type { UploadEndpoint } from './sendDocuments';
import { uploadDocuments } from './uploadDocuments';

/**
 * Upload and Upload Custom XML: Only Changed Products has a run of its own, per catalogue or part,
 * and for a part whose memory the workflow keeps.
 */
export async function executeUpload(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
): Promise<INodeExecutionData[]> {
	const onlyChanged = changedProductsSettings(context);
	if (!onlyChanged) return await uploadDocuments(context, items, failures, endpoint);
	const { knownVersionField } = onlyChanged;
	if (knownVersionField !== undefined)
		return await uploadChangedKnownToWorkflow(context, items, failures, endpoint, {
			...onlyChanged,
			knownVersionField,
		});
	return onlyChanged.partOfCatalogue
		? await uploadChangedPart(context, items, failures, endpoint, onlyChanged)
		: await uploadChangedProducts(context, items, failures, endpoint, onlyChanged);
}
