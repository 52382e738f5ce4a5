import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { forEachWithPauses } from '../../../../shared/pauses';
import type { ProductMemory } from '../../../../shared/ports';
import { cleanServiceText } from '../../../../shared/transport';
import { asNodeError, type ItemFailures } from '../../itemErrors';
import { elementName, prepareEntry } from '../documents';
import type { UploadEndpoint } from '../sendDocuments';
import type { UploadSettings } from '../uploadSettings';
import type { WaitSettings } from '../../waiting';
import { COLLECT_MS, sendCollected, stagedProduct, type CollectedDocuments } from './collection';
import { runOutput, type CheckedProducts, type SessionOutcomes } from './outputs';
import {
	beingSentElsewhere,
	memoryUnavailable,
	productKey,
	rememberedValue,
	type ProductIds,
} from './partMemory';
import type { ChangedProductsSettings, CollectSettings } from './settings';

/**
 * A run of part of the catalogue with Collected Into Full Documents: its changed products (claimed
 * by the run) join the collection of the Memory Name, and while a full document of products waits
 * there the run sends it (see collection.ts). Each item says whether its product was collected or
 * went in a document of this run; the run's summary lists the documents it sent.
 */
export async function collectChanged(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
	endpoint: UploadEndpoint,
	upload: UploadSettings,
	{ memory, ids }: { memory: ProductMemory; ids: ProductIds },
	checked: CheckedProducts,
	runId: string,
	settings: ChangedProductsSettings & { collect: CollectSettings },
): Promise<INodeExecutionData[]> {
	const { memoryName, productsPerDocument } = settings.collect;
	const documents = documentsOf(context, upload, endpoint);
	const fail = (itemIndex: number, error: Error) => {
		checked.entries.delete(itemIndex);
		checked.itemErrors.set(itemIndex, error);
		if (!failures.continueOnFail) failures.output(error, [itemIndex]);
	};
	const staged = await stageChanged(context, items, upload, checked, { documents, ids }, fail);
	const answer = await memory
		.collect([...staged.values()], runId, JSON.stringify(documents), Date.now() + COLLECT_MS)
		.catch((error: unknown) => {
			throw memoryUnavailable(context, error);
		});
	if ('otherDocuments' in answer) throw otherDocuments(context, memoryName, answer.otherDocuments);
	for (const [itemIndex, [key]] of staged) {
		if (!answer.notCollected.has(key)) continue;
		staged.delete(itemIndex);
		fail(itemIndex, beingSentElsewhere(context, checked.products.get(itemIndex) ?? '', itemIndex));
	}

	// Set whenever the wait is asked for: the run's own Options say how long.
	const wait = upload.waitOf(0, true) as WaitSettings;
	const sent = await sendCollected(context, memory, productsPerDocument, productsPerDocument, wait);
	const outcomes: SessionOutcomes = {
		outcomeOf: new Map(),
		sessions: sent.documents.filter((json) => json.sessionId !== undefined),
		confirmed: [],
		refused: [],
	};
	await forEachWithPauses(staged, ([itemIndex, [key]]) => {
		const json = sent.documentOf.get(key);
		const status = json && json.waitError === undefined ? json.status : undefined;
		outcomes.outcomeOf.set(itemIndex, {
			json: json ?? { collected: true },
			status: typeof status === 'string' ? status : undefined,
		});
	});
	const summary: IDataObject = {
		memoryName,
		collected: staged.size,
		documentsSent: sent.documents,
	};
	if (sent.note) summary.memory = sent.note;
	return await runOutput(items, failures, checked, outcomes, summary, settings.outputUnchanged);
}

/** How this run's documents are built and sent: its collection holds only products for the same. */
function documentsOf(
	context: IExecuteFunctions,
	upload: UploadSettings,
	endpoint: UploadEndpoint,
): CollectedDocuments {
	const customer = upload.customerOf(0);
	return {
		endpoint,
		rootElement: elementName(context, 'rootElement', 0),
		declaration: context.getNodeParameter('xmlDeclaration', 0, true) as boolean,
		contentType: upload.contentTypeOf(0),
		...(customer && { customer }),
	};
}

/**
 * The key and staged value of each changed product, by item; an item whose product cannot become
 * XML, or that names another customer than the first item, fails.
 */
async function stageChanged(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	upload: UploadSettings,
	checked: CheckedProducts,
	{ documents, ids }: { documents: CollectedDocuments; ids: ProductIds },
	fail: (itemIndex: number, error: Error) => void,
): Promise<Map<number, [string, string]>> {
	const staged = new Map<number, [string, string]>();
	const customer = JSON.stringify(documents.customer ?? null);
	await forEachWithPauses([...checked.entries], ([itemIndex, entry]) => {
		if (entry.reason === 'unchanged') return;
		try {
			if (JSON.stringify(upload.customerOf(itemIndex) ?? null) !== customer)
				throw new NodeOperationError(
					context.getNode(),
					`The Customer of item ${itemIndex} is not that of item 0`,
					{
						itemIndex,
						description:
							'Collected Into Full Documents sends every product of a run to one customer: give each customer a node and Memory Name of its own.',
					},
				);
			const itemElement = elementName(context, 'itemElement', itemIndex);
			const { xml } = prepareEntry(context, items, [itemIndex], itemIndex, itemElement);
			staged.set(itemIndex, [productKey(entry), stagedProduct(rememberedValue(entry, ids), xml)]);
		} catch (error) {
			fail(itemIndex, asNodeError(context, error, itemIndex));
		}
	});
	return staged;
}

function otherDocuments(
	context: IExecuteFunctions,
	memoryName: string,
	held: string,
): NodeOperationError {
	const { endpoint, rootElement, customer } = JSON.parse(held) as CollectedDocuments;
	return new NodeOperationError(
		context.getNode(),
		`The memory "${cleanServiceText(memoryName, 100)}" is collecting products for other documents`,
		{
			itemIndex: 0,
			description: `Nothing was sent or collected. It holds products for /api/${endpoint} in <${rootElement}> for ${customer ? `customer ${customer.customerIdType} ${customer.customerId}` : "the credential's customer"}; every node naming a memory must build its documents the same way. Send Collected Products empties it.`,
		},
	);
}
