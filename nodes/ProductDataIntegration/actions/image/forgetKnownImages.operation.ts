import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { getCustomerOverride } from '../../../shared/customer';
import { customerOnlyOptions } from '../../../shared/descriptions';
import { DEFAULT_LOOK_UP_AGAIN_DAYS, knownImagesOf } from '../../../shared/knownImages';

const properties: INodeProperties[] = [customerOnlyOptions];

export const description = updateDisplayOptions(
	{ show: { resource: ['image'], operation: ['forgetKnownImages'] } },
	properties,
);

/** Sends no request: the next upload of each image asks the service again. */
export async function executeItem(
	context: IExecuteFunctions,
	itemIndex: number,
): Promise<IDataObject> {
	const customer = getCustomerOverride(context, itemIndex);
	const known = await knownImagesOf(context, itemIndex, customer, DEFAULT_LOOK_UP_AGAIN_DAYS);
	const forgotten = await known.forget().catch((error: Error) => {
		throw new NodeOperationError(
			context.getNode(),
			'The known images could not be forgotten in Redis: it could not be asked',
			{
				itemIndex,
				description: `Nothing was forgotten there, so the next upload still takes them as known. Run it again when Redis answers. (${error.message})`,
			},
		);
	});
	return { forgotten, sharedMemory: known.shared };
}
