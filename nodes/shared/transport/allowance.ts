import type { IExecuteFunctions, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { type Allowance, parseAllowance } from './addresses';
import { cleanServiceText } from './responses';
import type { ServiceContext } from './types';

/** The option (in the node's Options) naming the internal hosts its URLs may reach. */
export const ALLOWED_INTERNAL_HOSTS = 'allowedInternalHosts';

const FIELD = `options.${ALLOWED_INTERNAL_HOSTS}`;

/** An item's Allowed Internal Hosts, as given; checked before any request. */
export function allowanceFrom(
	context: Pick<ServiceContext, 'getNode'>,
	itemIndex: number | undefined,
	value: unknown,
): Allowance {
	try {
		return parseAllowance(typeof value === 'string' ? value : '');
	} catch (error) {
		const item = itemIndex === undefined ? '' : ` of item ${itemIndex}`;
		throw new NodeOperationError(
			context.getNode(),
			`The Allowed Internal Hosts${item} are not valid: ${cleanServiceText((error as Error).message, 200)}`,
			{
				itemIndex,
				description:
					'Name hosts (shop.lan), hosts with a port (10.0.0.5:8080) or networks (10.1.0.0/16), separated by commas.',
			},
		);
	}
}

/** The node's Allowed Internal Hosts for an item (a poll has none: the node's own). */
export function allowanceOf(context: ServiceContext, itemIndex: number | undefined): Allowance {
	const value =
		itemIndex === undefined
			? (context as IPollFunctions).getNodeParameter(FIELD, '')
			: (context as IExecuteFunctions).getNodeParameter(FIELD, itemIndex, '');
	return allowanceFrom(context, itemIndex, value);
}
