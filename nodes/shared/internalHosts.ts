import type { INodeProperties } from 'n8n-workflow';

import { ALLOWED_INTERNAL_HOSTS } from './transport';

/**
 * The one opt-in for hosts inside the company network: URLs from the data (a photo) or from whoever
 * answers as the service (an error document on another host) reach the public internet only,
 * besides what this option names. Nothing allows an internal address silently.
 */
export const allowedInternalHostsOption: INodeProperties = {
	displayName: 'Allowed Internal Hosts',
	name: ALLOWED_INTERNAL_HOSTS,
	type: 'string',
	default: '',
	placeholder: 'e.g. dam.intranet:8443, 10.20.0.0/16',
	description:
		'Hosts inside your network this node may fetch photos (Photo URL) or error documents from, separated by commas: a host (any port), host:port, or a network (CIDR, not one naming every address such as 0.0.0.0/0); a host named here may also be reached over plain http. Empty: the public internet only; a URL or a redirect leading to a loopback, private, link-local or other internal address fails before anything is sent to it.',
};
