import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { normalizeSessionId } from '../../../shared/sessions';

function invalidSessionId(
	context: IExecuteFunctions,
	itemIndex: number,
	field: string,
	value: unknown,
): NodeOperationError {
	const shown = String(value ?? '').trim();
	return new NodeOperationError(
		context.getNode(),
		shown === ''
			? `The ${field} of item ${itemIndex} is empty`
			: `The ${field} of item ${itemIndex} is not a session ID: "${shown.slice(0, 100)}"`,
		{
			itemIndex,
			description:
				'A session ID is the GUID an upload returned, e.g. 3f2504e0-4f89-41d3-9a0c-0305e82c3301',
		},
	);
}

/** The Session ID parameter of an item, trimmed and checked before any request. */
export function getSessionId(context: IExecuteFunctions, itemIndex: number): string {
	const value = context.getNodeParameter('sessionId', itemIndex, '') as unknown;
	const sessionId = normalizeSessionId(value);
	if (!sessionId) throw invalidSessionId(context, itemIndex, 'Session ID', value);
	return sessionId;
}

/**
 * The Session IDs parameter of an item: one ID, several separated by commas, spaces or line
 * breaks, or a list given by an expression.
 */
export function getSessionIds(context: IExecuteFunctions, itemIndex: number): string[] {
	const value = context.getNodeParameter('sessionIds', itemIndex, '') as unknown;
	const candidates = (Array.isArray(value) ? value : String(value ?? '').split(/[\s,;]+/))
		.map((entry) => (typeof entry === 'string' ? entry.trim() : entry))
		.filter((entry) => entry !== '');
	if (candidates.length === 0) throw invalidSessionId(context, itemIndex, 'Session IDs', '');
	const ids = candidates.map((candidate) => {
		const sessionId = normalizeSessionId(candidate);
		if (!sessionId) throw invalidSessionId(context, itemIndex, 'Session IDs', candidate);
		return sessionId;
	});
	return [...new Set(ids)];
}
