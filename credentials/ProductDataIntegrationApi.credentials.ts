import type {
	IAuthenticateGeneric,
	ICredentialTestRequest,
	ICredentialType,
	INodeProperties,
} from 'n8n-workflow';

import { LOOPBACK_HTTP } from '../nodes/shared/throttle';
import {
	BUCKET_CAPACITY_FIELD,
	LEAK_INTERVAL_FIELD,
	REQUEST_TIMEOUT_FIELD,
} from '../nodes/shared/transport/settings';
import { CREDENTIAL_DISPLAY_NAME, CREDENTIAL_NAME, sharingProperties } from './edition';

/** The Base URL as the URL parser reads it: without the characters it strips or ignores. */
const TESTED_URL =
	'String($credentials.baseUrl).replace(/[\\t\\n\\r]/g, "").replace(/^[\\u0000-\\u0020]+|[\\u0000-\\u0020]+$/g, "")';

const REDIRECT_MESSAGE =
	'The Base URL redirects elsewhere: the credentials were not sent there and the test stops. Use the address the service answers at directly';

export class ProductDataIntegrationApi implements ICredentialType {
	name = CREDENTIAL_NAME;

	displayName = CREDENTIAL_DISPLAY_NAME;

	icon = {
		light: 'file:../icons/productDataIntegration.svg',
		dark: 'file:../icons/productDataIntegration.dark.svg',
	} as const;

	documentationUrl =
		'https://github.com/product-data-integration/n8n-nodes-product-data-integration#credentials';

	properties: INodeProperties[] = [
		{
			displayName: 'Environment',
			name: 'environment',
			type: 'options',
			options: [
				{
					name: 'Production',
					value: 'production',
					description: 'Data that end users see',
				},
				{
					name: 'Development/Test',
					value: 'test',
					description: 'Separate data, with additional validation of the data format',
				},
			],
			default: 'production',
			description:
				'The two environments share no data and each has its own username and password, issued by the support centre',
		},
		{
			displayName: 'Base URL',
			name: 'baseUrl',
			type: 'string',
			default: '',
			required: true,
			placeholder: 'e.g. https://integration.example.com',
			description:
				'Address of the chosen environment, without /api. Must start with https:// (http:// is refused for any host except localhost, 127.0.0.1 and ::1, because the password would travel unencrypted).',
		},
		{
			displayName: 'Username',
			name: 'username',
			type: 'string',
			default: '',
			required: true,
		},
		{
			displayName: 'Password',
			name: 'password',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
		},
		{
			displayName: 'Customer ID',
			name: 'customerId',
			type: 'string',
			default: '',
			required: true,
			description:
				'Customer node every request acts on, unless a node overrides it. Its kind is set in Customer ID Type.',
		},
		{
			displayName: 'Customer ID Type',
			name: 'customerIdType',
			type: 'options',
			options: [
				{
					name: 'Service ID',
					value: 'ServiceID',
					description: 'The numeric ID the service assigned to the customer node',
				},
				{
					name: 'External ID',
					value: 'ExternalID',
					description: 'Your own ID of the customer node',
				},
			],
			default: 'ServiceID',
		},
		{
			displayName: 'Service Time Zone',
			name: 'serviceTimeZone',
			type: 'string',
			default: 'UTC',
			placeholder: 'e.g. Europe/Berlin',
			description:
				'Time zone in which the service dates uploads: a day of the service (Get Many, the trigger) runs from midnight to midnight in it. An IANA name such as Europe/Berlin, or UTC.',
		},
		{
			displayName: REQUEST_TIMEOUT_FIELD.displayName,
			name: REQUEST_TIMEOUT_FIELD.name,
			type: 'number',
			typeOptions: { minValue: REQUEST_TIMEOUT_FIELD.min, maxValue: REQUEST_TIMEOUT_FIELD.max },
			default: REQUEST_TIMEOUT_FIELD.default,
			description:
				'How long one request may take to connect and be answered (a large upload: how long it may go without progress), from 1 second to 1 hour. A document upload that times out is reported as possibly received and never sent again blindly.',
		},
		{
			displayName: 'Custom Rate Limit',
			name: 'customRateLimit',
			type: 'boolean',
			default: false,
			description:
				'Whether this account has other request-limit terms than the standard 50 requests at once, then 1 every 5 seconds',
		},
		{
			displayName: BUCKET_CAPACITY_FIELD.displayName,
			name: BUCKET_CAPACITY_FIELD.name,
			type: 'number',
			typeOptions: {
				minValue: BUCKET_CAPACITY_FIELD.min,
				maxValue: BUCKET_CAPACITY_FIELD.max,
				numberPrecision: 0,
			},
			default: BUCKET_CAPACITY_FIELD.default,
			description: 'How many requests the account may send at once (1 to 10,000)',
			displayOptions: { show: { customRateLimit: [true] } },
		},
		{
			displayName: LEAK_INTERVAL_FIELD.displayName,
			name: LEAK_INTERVAL_FIELD.name,
			type: 'number',
			typeOptions: {
				minValue: LEAK_INTERVAL_FIELD.min,
				maxValue: LEAK_INTERVAL_FIELD.max,
				numberPrecision: 3,
			},
			default: LEAK_INTERVAL_FIELD.default,
			description: 'After the first burst, one request every this many seconds (0.001 to 900)',
			displayOptions: { show: { customRateLimit: [true] } },
		},
		...sharingProperties,
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			auth: {
				username: '={{$credentials.username}}',
				password: '={{$credentials.password}}',
			},
			headers: {
				customerId: '={{$credentials.customerId}}',
				customerIdType: '={{$credentials.customerIdType}}',
			},
		},
	};

	test: ICredentialTestRequest = {
		request: {
			// The Test button sends the password before any node code can refuse plain http, so a
			// plain-http address of another host is tested over https: the password never travels
			// unencrypted, and a host without https fails the test, as it would fail in the nodes.
			// The address is first cleaned as the URL parser cleans it, so characters it ignores
			// (control characters around it, tabs and line breaks inside) cannot hide the scheme. Which
			// plain-http addresses are this machine is the nodes' own rule.
			baseURL: `={{ ${LOOPBACK_HTTP}.test(${TESTED_URL}) ? ${TESTED_URL} : ${TESTED_URL}.replace(/^http:/i, "https:") }}`,
			url: '/api/auth/me',
			method: 'GET',
			// The credentials go to the configured address only: a redirect fails the test.
			disableFollowRedirect: true,
			maxRedirects: 0,
			sendCredentialsOnCrossOriginRedirect: false,
		},
		rules: [
			{
				type: 'responseCode',
				properties: {
					value: 401,
					message:
						'Authorization denied (401): check the username and password, and that they belong to the chosen environment',
				},
			},
			{
				type: 'responseCode',
				properties: {
					value: 404,
					message:
						'No service found at this Base URL (404): use the address in front of /api, without /api itself',
				},
			},
			...[301, 302, 303, 307, 308].map((value) => ({
				type: 'responseCode' as const,
				properties: { value, message: `${REDIRECT_MESSAGE} (${value})` },
			})),
			{
				type: 'responseCode',
				properties: {
					value: 429,
					message:
						'The request limit of this account is used up right now (429): wait a minute and test again',
				},
			},
		],
	};
}
