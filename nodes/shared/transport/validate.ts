import {
	NodeOperationError,
	type ICredentialDataDecryptedObject,
	type IDataObject,
	type INode,
} from 'n8n-workflow';

import { effectiveCustomer } from './account';
import type { CustomerOverride } from './types';

/** What a header value can carry: Latin-1 text and tabs, no line breaks or other control characters. */
const HEADER_VALUE = /^[\t\x20-\x7e\xa0-\xff]*$/;
/** A service ID: the number the service gave the customer node. */
export const SERVICE_ID = /^\d{1,18}$/;
/** An external ID: one line of Latin-1 text (it travels in a header), not blank, at most 200 characters. */
export const EXTERNAL_ID =
	/^(?=.{1,200}$)[\x20-\x7e\xa0-\xff]*[\x21-\x7e\xa1-\xff][\x20-\x7e\xa0-\xff]*$/;

function whose(itemIndex: number | undefined): string {
	return itemIndex === undefined ? '' : ` of item ${itemIndex}`;
}

/**
 * The customer a request acts on, checked before any request is spent: n8n writes it into two
 * headers, and a value a header cannot carry would be cut or garbled on the way (41001€ acting on
 * customer 41001).
 */
export function checkCustomer(
	node: INode,
	override: CustomerOverride | undefined,
	credentials: ICredentialDataDecryptedObject,
	itemIndex: number | undefined,
): void {
	const source = override ? `The customer ID${whose(itemIndex)}` : "The credential's Customer ID";
	const { customerId: id, customerIdType: type } = effectiveCustomer(credentials, override);
	if (type === 'ServiceID' && !SERVICE_ID.test(id)) {
		throw new NodeOperationError(node, `${source} is not a service ID: "${id}"`, {
			itemIndex,
			description:
				'A service ID is the number the service gave the customer node (digits only). For your own ID of the node, use the type ExternalID.',
		});
	}
	if (type === 'ExternalID' && !EXTERNAL_ID.test(id)) {
		throw new NodeOperationError(node, `${source} cannot be sent: "${id}"`, {
			itemIndex,
			description:
				'An external ID travels in a request header, which carries Latin-1 letters, digits and signs only, without line breaks; it cannot be blank.',
		});
	}
}

/** Header values from item data: refused when a header cannot carry them (a line break would add headers). */
export function checkHeaders(
	node: INode,
	headers: IDataObject | undefined,
	itemIndex: number | undefined,
): void {
	for (const [name, value] of Object.entries(headers ?? {})) {
		if (value !== undefined && value !== null && !HEADER_VALUE.test(String(value))) {
			throw new NodeOperationError(
				node,
				`The ${name} header${whose(itemIndex)} holds characters a header cannot carry: "${String(value)}"`,
				{
					itemIndex,
				},
			);
		}
	}
}

/**
 * A path whose segments are what the caller meant: "." and ".." (also percent-encoded) would be
 * resolved away by the URL parser (HEAD /api/images/.. is HEAD /api/).
 */
export function checkPath(node: INode, path: string, itemIndex: number | undefined): void {
	const dotSegment = path.split('/').find((segment) => /^(\.|%2e){1,2}$/i.test(segment));
	if (dotSegment !== undefined) {
		throw new NodeOperationError(
			node,
			`The value "${dotSegment}"${whose(itemIndex)} cannot be used in a request path`,
			{
				itemIndex,
				description: `"." and ".." name a folder of the path instead of a value (${path})`,
			},
		);
	}
}
