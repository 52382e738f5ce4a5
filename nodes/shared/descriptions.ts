import type { INodeProperties } from 'n8n-workflow';

import { ALLOWED_INTERNAL_HOSTS, EXTERNAL_ID, SERVICE_ID } from './transport';

/*
 * The editor fields that both nodes, or several operations, share; each is read where it is used
 * (customer.ts, errorDocument.ts, the transport's allowance, the action node's waiting.ts and
 * uploadSession/sessionId.ts).
 */

/**
 * Goes into the "Options" collection of every operation (and of the trigger) whose requests name a
 * customer node: the credential's customer is the default, this picks another node of the account,
 * from the list or by either kind of ID.
 */
export const customerOption: INodeProperties = {
	displayName: 'Customer',
	name: 'customer',
	type: 'resourceLocator',
	default: { mode: 'list', value: '' },
	description: 'Customer node to act on instead of the one in the credential',
	modes: [
		{
			displayName: 'From List',
			name: 'list',
			type: 'list',
			placeholder: 'Select a customer...',
			typeOptions: { searchListMethod: 'searchCustomers', searchable: true },
		},
		{
			displayName: 'By ID',
			name: 'serviceId',
			type: 'string',
			placeholder: 'e.g. 1002',
			hint: 'The service ID: the number the service gave the customer node',
			validation: [
				{
					type: 'regex',
					properties: {
						regex: SERVICE_ID.source,
						errorMessage: 'A service ID is a number, e.g. 1002',
					},
				},
			],
		},
		{
			displayName: 'External ID',
			name: 'externalId',
			type: 'string',
			placeholder: 'e.g. STORE-NORTH',
			hint: 'Your own ID of the customer node',
			validation: [
				{
					type: 'regex',
					properties: {
						regex: EXTERNAL_ID.source,
						errorMessage: 'An external ID is one line of Latin-1 text, at most 200 characters',
					},
				},
			],
		},
	],
};

/** The "Options" collection of an operation whose only option is the customer node. */
export const customerOnlyOptions: INodeProperties = {
	displayName: 'Options',
	name: 'options',
	type: 'collection',
	placeholder: 'Add Option',
	default: {},
	options: [customerOption],
};

/** For every operation (and the trigger) that reports how an upload's processing ended. */
export const includeErrorMessageOption: INodeProperties = {
	displayName: 'Include Error Message',
	name: 'includeErrorMessage',
	type: 'boolean',
	default: false,
	description:
		"Whether to fetch the error message of an upload whose processing failed (one more request each; on another host than the Base URL's over https and without the credential), instead of giving only its URL. The reason comes out in errorMessage; a JSON message also comes out whole in errorDocument, its text in errorText.",
};

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

export const DEFAULT_WAIT_TIMEOUT_SECONDS = 300;

/** For the operations that wait for uploads to be processed. */
export const waitTimeoutOption: INodeProperties = {
	displayName: 'Timeout (Seconds)',
	name: 'timeout',
	type: 'number',
	typeOptions: { minValue: 0 },
	default: DEFAULT_WAIT_TIMEOUT_SECONDS,
	description:
		'How long to wait for the uploads of this item. Those still in the queue then come out with the status processing and timedOut true.',
};

/** For the operations that act on one upload session. */
export const sessionIdField: INodeProperties = {
	displayName: 'Session ID',
	name: 'sessionId',
	type: 'string',
	default: '',
	required: true,
	placeholder: 'e.g. 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
	description: 'The session ID (a GUID) that an upload returned',
	hint: "Usually the sessionId field of a document upload's output",
};
