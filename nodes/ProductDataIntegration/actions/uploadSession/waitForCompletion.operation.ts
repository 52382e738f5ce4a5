import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { waitForSessions, type SessionOutcome } from '../../../shared/sessions';
import type { CustomerOverride } from '../../../shared/transport';
import { customerOption, getCustomerOverride } from '../common';
import { asNodeError, itemFailure } from '../itemErrors';
import { getSessionIds } from './sessionId';

const DEFAULT_TIMEOUT_SECONDS = 300;

const properties: INodeProperties[] = [
	{
		displayName: 'Session IDs',
		name: 'sessionIds',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. {{ $json.sessionId }}',
		description:
			'The session ID an upload returned, or several separated by commas. The sessions of all input items are awaited together.',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [
			customerOption,
			{
				displayName: 'Include Error Message',
				name: 'includeErrorMessage',
				type: 'boolean',
				default: false,
				description:
					'Whether to fetch the error message of each session whose processing failed (one more request each)',
			},
			{
				displayName: 'Timeout (Seconds)',
				name: 'timeout',
				type: 'number',
				typeOptions: { minValue: 0 },
				default: DEFAULT_TIMEOUT_SECONDS,
				description:
					'How long to wait for all sessions. Sessions still in the queue then get the status processing.',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['uploadSession'], operation: ['waitForCompletion'] } },
	properties,
);

interface Request {
	itemIndex: number;
	sessionIds: string[];
	customer?: CustomerOverride;
	includeErrorMessage: boolean;
}

/**
 * Every item's sessions are checked first; then all sessions of the run are polled together
 * (one request per pending session per round, backing off from 5 to 60 seconds).
 */
export async function executeBatch(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const continueOnFail = this.continueOnFail();
	const entries: Array<{ request: Request } | { failure: INodeExecutionData }> = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const options = this.getNodeParameter('options', itemIndex, {}) as { includeErrorMessage?: boolean };
			entries.push({
				request: {
					itemIndex,
					sessionIds: getSessionIds(this, itemIndex),
					customer: getCustomerOverride.call(this, itemIndex),
					includeErrorMessage: options.includeErrorMessage === true,
				},
			});
		} catch (error) {
			if (!continueOnFail) throw asNodeError(this, error, itemIndex);
			entries.push({ failure: itemFailure(this, error, itemIndex) });
		}
	}
	const pending = entries.flatMap((entry) => ('request' in entry ? [entry.request] : []));
	if (pending.length === 0) return entries.flatMap((entry) => ('failure' in entry ? [entry.failure] : []));

	const { timeout = DEFAULT_TIMEOUT_SECONDS } = this.getNodeParameter('options', pending[0].itemIndex, {}) as {
		timeout?: number;
	};
	const groups = new Map<string, Request[]>();
	for (const request of pending) {
		const key = JSON.stringify([request.customer ?? null, request.includeErrorMessage]);
		groups.set(key, [...(groups.get(key) ?? []), request]);
	}

	const outcomes = new Map<Request, Map<string, SessionOutcome>>();
	try {
		await Promise.all(
			[...groups.values()].map(async (group) => {
				const result = await waitForSessions.call(
					this,
					group.flatMap((request) => request.sessionIds),
					{
						timeoutMs: Math.max(0, Number(timeout)) * 1000,
						includeErrorMessage: group[0].includeErrorMessage,
						customer: group[0].customer,
					},
				);
				for (const request of group) outcomes.set(request, result);
			}),
		);
	} catch (error) {
		if (!continueOnFail) throw asNodeError(this, error, pending[0].itemIndex);
		return entries.map((entry) =>
			'failure' in entry ? entry.failure : itemFailure(this, error, entry.request.itemIndex),
		);
	}

	return entries.flatMap((entry): INodeExecutionData[] => {
		if ('failure' in entry) return [entry.failure];
		const { request } = entry;
		const result = outcomes.get(request) as Map<string, SessionOutcome>;
		return request.sessionIds.map((sessionId) => {
			const outcome = result.get(sessionId) ?? { sessionId, status: 'processing' };
			return {
				json: { ...outcome, ...(outcome.status === 'processing' ? { timedOut: true } : {}) },
				pairedItem: { item: request.itemIndex },
			};
		});
	});
}
