import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import * as account from './actions/account/Account.resource';
import * as document from './actions/document/Document.resource';
import * as image from './actions/image/Image.resource';
import * as uploadSession from './actions/uploadSession/UploadSession.resource';
import { router } from './actions/router';
import { listSearch } from '../shared/methods';
import { EDITION } from '../edition/edition';
import { useEdition } from '../shared/ports';

// The edition is chosen here, at the top, before any run of the package's nodes.
useEdition(EDITION);

export class ProductDataIntegration implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Product Data Integration',
		name: 'productDataIntegration',
		icon: {
			light: 'file:../../icons/productDataIntegration.svg',
			dark: 'file:../../icons/productDataIntegration.dark.svg',
		},
		group: ['output'],
		version: 1,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description:
			'Upload product XML and images to the product-data integration service and follow upload sessions',
		defaults: {
			name: 'Product Data Integration',
		},
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: EDITION.credentialType,
				required: true,
			},
		],
		properties: [
			{
				displayName: 'Resource',
				name: 'resource',
				type: 'options',
				noDataExpression: true,
				options: [
					{ name: 'Account', value: 'account' },
					{ name: 'Document', value: 'document' },
					{ name: 'Image', value: 'image' },
					{ name: 'Upload Session', value: 'uploadSession' },
				],
				default: 'document',
			},
			...account.description,
			...document.description,
			...image.description,
			...uploadSession.description,
		],
	};

	methods = { listSearch };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router(this);
	}
}
