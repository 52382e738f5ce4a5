import type { IExecuteFunctions, INodeProperties, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { type Allowance, cleanServiceText, parseAllowance, type ServiceContext } from './transport';

/**
 * The one opt-in for hosts inside the company network: URLs from the data (a photo) or from whoever
 * answers as the service (an error document on another host) reach the public internet only,
 * besides what this option names. Nothing allows an internal address silently.
 */
export const allowedInternalHostsOption: INodeProperties = {
	displayName: 'Allowed Internal Hosts',
	name: 'allowedInternalHosts',
	type: 'string',
	default: '',
	placeholder: 'e.g. dam.intranet:8443, 10.20.0.0/16',
	description:
		'Hosts inside your network this node may fetch photos (Photo URL) or error documents from, separated by commas: a host (any port), host:port, or a network (CIDR); a host named here may also be reached over plain http. Empty: the public internet only; a URL or a redirect leading to a loopback, private, link-local or other internal address fails before anything is sent to it.',
};

const FIELD = `options.${allowedInternalHostsOption.name}`;

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
