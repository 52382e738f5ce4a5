import type {
	IDataObject,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes, NodeOperationError } from 'n8n-workflow';

import { getCustomerOverride } from '../shared/customer';
import {
	customerOption,
	includeErrorMessageOption,
	allowedInternalHostsOption,
} from '../shared/descriptions';
import { listSearch } from '../shared/methods';
import { EDITION } from '../edition/edition';
import { useEdition } from '../shared/ports';
import type { StatusFilter } from './events';
import { pollUploads } from './poll';

// The edition is chosen here, at the top, before any run of the package's nodes.
useEdition(EDITION);

const DEFAULT_MAX_CHECKS = 8;

export class ProductDataIntegrationTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Product Data Integration Trigger',
		name: 'productDataIntegrationTrigger',
		icon: {
			light: 'file:../../icons/productDataIntegration.svg',
			dark: 'file:../../icons/productDataIntegration.dark.svg',
		},
		group: ['trigger'],
		version: 1,
		subtitle: '={{$parameter["events"].join(", ")}}',
		description:
			'Starts the workflow when an upload to the product-data integration service has finished processing or has been received',
		defaults: {
			name: 'Product Data Integration Trigger',
		},
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: EDITION.credentialType,
				required: true,
			},
		],
		properties: [
			{
				displayName:
					'Each poll lists the uploads of the day and checks unfinished ones; every request counts against the account’s rate limit (50 at once, then 1 per 5 seconds), shared with everything else using it. Activating starts from now: earlier uploads are not reported.',
				name: 'notice',
				type: 'notice',
				default: '',
			},
			{
				displayName: 'Events',
				name: 'events',
				type: 'multiOptions',
				required: true,
				options: [
					{
						name: 'New Upload Received',
						value: 'uploadReceived',
						description: 'An uploaded document appears in the list of the day',
					},
					{
						name: 'Upload Finished',
						value: 'uploadFinished',
						description: 'Processing of an uploaded document has ended, with or without errors',
					},
				],
				default: ['uploadFinished'],
				description: 'What starts the workflow; with both, an upload can start it twice',
			},
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				displayOptions: { show: { events: ['uploadFinished'] } },
				options: [
					{
						name: 'Any',
						value: 'any',
						description: 'Every finished upload',
					},
					{
						name: 'Succeeded',
						value: 'succeeded',
						description: 'Uploads processed without errors',
					},
					{
						name: 'Failed',
						value: 'failed',
						description: 'Uploads processed with errors',
					},
				],
				default: 'any',
				description: 'Which finished uploads to report',
			},
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				placeholder: 'Add Option',
				default: {},
				options: [
					allowedInternalHostsOption,
					customerOption,
					includeErrorMessageOption,
					{
						displayName: 'Max Status Checks per Poll',
						name: 'maxChecks',
						type: 'number',
						typeOptions: { minValue: 1, maxValue: 45 },
						default: DEFAULT_MAX_CHECKS,
						description:
							'At most this many status requests per poll; further unfinished uploads are checked on later polls. With the one or two list requests, the default keeps a poll at 10 requests at most, plus one per error message fetched for Include Error Message.',
					},
				],
			},
		],
	};

	methods = { listSearch };

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const events = this.getNodeParameter('events', []) as string[];
		if (events.length === 0) {
			throw new NodeOperationError(this.getNode(), 'Choose at least one event to trigger on');
		}
		const options = this.getNodeParameter('options', {}) as IDataObject;
		const maxChecks = Math.floor(Number(options.maxChecks ?? DEFAULT_MAX_CHECKS));
		return await pollUploads(this, {
			uploadReceived: events.includes('uploadReceived'),
			uploadFinished: events.includes('uploadFinished'),
			status: this.getNodeParameter('status', 'any') as StatusFilter,
			includeErrorMessage: options.includeErrorMessage === true,
			maxChecks: Number.isFinite(maxChecks) && maxChecks >= 1 ? maxChecks : DEFAULT_MAX_CHECKS,
			customer: getCustomerOverride(this),
		});
	}
}
