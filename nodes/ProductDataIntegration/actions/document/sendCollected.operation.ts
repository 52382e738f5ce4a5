import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import {
	allowedInternalHostsOption,
	includeErrorMessageOption,
	waitTimeoutOption,
} from '../../../shared/descriptions';
import { waitSettings, type WaitOptions } from '../waiting';
import { sendCollected } from './changedProducts/collection';
import { memoryUnavailable, productIdOf, productMemoryOf } from './changedProducts/partMemory';
import { collectSettings, productsPerDocumentField } from './changedProducts/settings';

/** Missing products named in the output, as the whole-catalogue run's summary would. */
const MISSING_LISTED = 100;

const NOT_COUNTED =
	'not counted: Count Missing Products is off (a night of a delta feed holds only what changed)';

const properties: INodeProperties[] = [
	{
		displayName: 'Memory Name',
		name: 'memoryName',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. shop-catalogue',
		description:
			'The Memory Name of the upload nodes whose changed products were collected (Only Changed Products, Send Changed Products: Collected Into Full Documents)',
		hint: 'Run it once the night’s last page has ended: what it finds collected is sent now',
	},
	productsPerDocumentField(undefined),
	{
		displayName: 'Count Missing Products',
		name: 'countMissingProducts',
		type: 'boolean',
		default: true,
		description:
			"Whether this night's pages held the whole catalogue: products remembered under the Memory Name that no page held since the last count are counted, the first 100 named, and forgotten (one that comes back is sent as new). Turn it off for a delta feed's night, which holds only what changed.",
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [allowedInternalHostsOption, includeErrorMessageOption, waitTimeoutOption],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['document'], operation: ['sendCollected'] } },
	properties,
);

/**
 * Sends everything the memory's collection holds, in documents of Products per Document, awaits
 * their sessions and remembers what the service confirmed (see changedProducts/collection.ts). A
 * document that could not be uploaded stays collected and fails the item, which lists the sessions
 * of the documents that were.
 */
export async function executeItem(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	const { memoryName, productsPerDocument } = collectSettings(context, itemIndex);
	const wait = waitSettings(
		context,
		itemIndex,
		context.getNodeParameter('options', itemIndex, {}) as WaitOptions,
		undefined,
	);
	const { memory, ids } = await productMemoryOf(context, memoryName);
	const sent = await sendCollected(context, memory, productsPerDocument, 1, wait);
	const uploaded = sent.documents.filter((json) => json.sessionId !== undefined);
	const notUploaded = sent.documents.filter((json) => json.sessionId === undefined);
	if (notUploaded.length > 0) {
		const sessions = uploaded.map((json) => String(json.sessionId)).join(', ') || 'none';
		throw new NodeOperationError(
			context.getNode(),
			`${notUploaded.length} of ${sent.documents.length} collected documents of "${memoryName}" could not be uploaded: ${String(notUploaded[0].error)}`,
			{
				itemIndex,
				description: `Their products stay collected for the next Send Collected Products. Uploaded: ${sessions}.`,
			},
		);
	}
	const result: IDataObject = {
		memoryName,
		productsSent: uploaded.reduce((sum, json) => sum + Number(json.products), 0),
		documents: uploaded,
	};
	if (uploaded.length === 0)
		result.message = `Nothing was collected under "${memoryName}": no request was made.`;
	if (sent.note) result.memory = sent.note;
	if (context.getNodeParameter('countMissingProducts', itemIndex, true) !== true)
		return { ...result, missing: NOT_COUNTED };
	const { forgotten, values } = await memory.closeNight(MISSING_LISTED).catch((error: unknown) => {
		throw memoryUnavailable(context, error);
	});
	return {
		...result,
		missing: forgotten,
		missingProducts: values.map((value) => productIdOf(value, ids) ?? '(not readable)'),
	};
}
