import type { INodeProperties } from 'n8n-workflow';

import {
	customerOption,
	includeErrorMessageOption,
	allowedInternalHostsOption,
	waitTimeoutOption,
} from '../../../shared/descriptions';
import { changedProductsFields } from './changedProducts/settings';

/**
 * The fields of Upload and Upload Custom XML, which differ only in what the XML they take is.
 * `xmlDescription` says it for the Text source.
 */
export function uploadFields(xmlDescription: string): INodeProperties[] {
	return [
		{
			displayName: 'XML Source',
			name: 'source',
			type: 'options',
			noDataExpression: true,
			options: [
				{
					name: 'Binary File',
					value: 'binary',
					description: 'An XML file in a binary field of each input item',
				},
				{
					name: 'Build From Items',
					value: 'items',
					description:
						'One XML document built from the JSON of the input items, one element per item',
				},
				{
					name: 'Text',
					value: 'text',
					description: 'An XML document given as text, one per input item',
				},
			],
			default: 'binary',
			description: 'Where the XML document comes from',
		},
		{
			displayName: 'Input Binary Field',
			name: 'binaryPropertyName',
			type: 'string',
			default: 'data',
			required: true,
			hint: 'The name of the input binary field containing the file to be uploaded',
			displayOptions: { show: { source: ['binary'] } },
		},
		{
			displayName: 'XML',
			name: 'xml',
			type: 'string',
			typeOptions: { rows: 8 },
			default: '',
			required: true,
			placeholder: '<Products><Product>…</Product></Products>',
			description: xmlDescription,
			displayOptions: { show: { source: ['text'] } },
		},
		{
			displayName: 'Root Element',
			name: 'rootElement',
			type: 'string',
			default: 'Products',
			required: true,
			description: 'Name of the element that encloses all items of a document',
			displayOptions: { show: { source: ['items'] } },
		},
		{
			displayName: 'Item Element',
			name: 'itemElement',
			type: 'string',
			default: 'Product',
			required: true,
			description:
				'Name of the element each input item becomes. Its fields become child elements; fields starting with @ become attributes and a field named #text the element’s text.',
			displayOptions: { show: { source: ['items'] } },
		},
		{
			displayName: 'Items per Document',
			name: 'itemsPerDocument',
			type: 'number',
			typeOptions: { minValue: 0 },
			default: 0,
			description: 'How many input items go into one document',
			hint: '0 puts all input items into one document (one request); N sends one document per N items',
			// Collected products go in documents of Products per Document instead.
			displayOptions: { show: { source: ['items'] }, hide: { sendChangedProducts: ['collected'] } },
		},
		{
			displayName: 'Include XML Declaration',
			name: 'xmlDeclaration',
			type: 'boolean',
			default: true,
			description:
				'Whether the document starts with an XML declaration (version 1.0, encoding UTF-8)',
			displayOptions: { show: { source: ['items'] } },
		},
		...changedProductsFields,
		{
			displayName: 'Options',
			name: 'options',
			type: 'collection',
			placeholder: 'Add Option',
			default: {},
			options: [
				{
					...allowedInternalHostsOption,
					description: `${allowedInternalHostsOption.description} Needs Wait for Completion and Include Error Message.`,
				},
				{
					displayName: 'Content Type',
					name: 'contentType',
					type: 'options',
					options: [
						{ name: 'Application/XML', value: 'application/xml' },
						{ name: 'Text/XML', value: 'text/xml' },
					],
					default: 'application/xml',
					description: 'Media type sent in the Content-Type header of the upload',
				},
				customerOption,
				{
					displayName: 'Fail on Processing Error',
					name: 'failOnProcessingError',
					type: 'boolean',
					default: false,
					description:
						'Whether an item fails when the service finished processing its document with errors. Needs Wait for Completion.',
				},
				{
					...includeErrorMessageOption,
					description: `${includeErrorMessageOption.description} Needs Wait for Completion.`,
				},
				{
					...waitTimeoutOption,
					description: `${waitTimeoutOption.description} Needs Wait for Completion.`,
				},
				{
					displayName: 'Validate Before Upload',
					name: 'validate',
					type: 'boolean',
					default: true,
					description:
						'Whether to check that each document is well-formed XML before any of them is sent, so a broken document costs no request. Large files are checked as a stream.',
				},
				{
					displayName: 'Wait for Completion',
					name: 'waitForCompletion',
					type: 'boolean',
					default: false,
					description:
						'Whether to wait, after all documents are uploaded, until the service has processed them (polled together, backing off from 5 to 60 seconds) and output their status',
				},
			],
		},
	];
}
