import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { customerOption, getCustomerOverride } from '../../../shared/customer';
import { DEFAULT_LOOK_UP_AGAIN_DAYS, knownImagesOf } from './knownImageStore';

const properties: INodeProperties[] = [
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [customerOption],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['image'], operation: ['forgetKnownImages'] } },
	properties,
);

/** Sends no request: the next upload of each image asks the service again. */
export async function executeItem(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const customer = getCustomerOverride.call(this, itemIndex);
	const known = await knownImagesOf(this, itemIndex, customer, DEFAULT_LOOK_UP_AGAIN_DAYS);
	const forgotten = await known.forget();
	return { forgotten, sharedMemory: known.shared };
}
