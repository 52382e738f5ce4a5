import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { isUnknownSession, waitForAllSessions, type SessionToAwait, type WaitResult } from '../../../shared/sessions';
import {
	customerOption,
	getCustomerOverride,
	getWaitTimeoutMs,
	includeErrorMessageOption,
	waitedOutcome,
	waitTimeoutOption,
} from '../common';
import { asNodeError, itemFailure } from '../itemErrors';
import { getSessionIds } from './sessionId';

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
		hint: 'Usually the sessionId field of a document upload\'s output; a list from an expression works too',
	},
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add Option',
		default: {},
		options: [customerOption, includeErrorMessageOption, waitTimeoutOption],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['uploadSession'], operation: ['waitForCompletion'] } },
	properties,
);

/**
 * Every item's sessions and options are checked first; then all sessions of the run are polled
 * together (one request per pending session per round, backing off from 5 to 60 seconds).
 */
export async function executeBatch(
	this: IExecuteFunctions,
	items: INodeExecutionData[],
): Promise<INodeExecutionData[]> {
	const continueOnFail = this.continueOnFail();
	const entries: Array<{ sessions: SessionToAwait[]; timeoutMs: number } | { failure: INodeExecutionData }> = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const { includeErrorMessage } = this.getNodeParameter('options', itemIndex, {}) as { includeErrorMessage?: boolean };
			const customer = getCustomerOverride.call(this, itemIndex);
			const timeoutMs = getWaitTimeoutMs.call(this, itemIndex);
			const sessions = getSessionIds(this, itemIndex).map((sessionId) => ({
				sessionId,
				itemIndex,
				customer,
				includeErrorMessage: includeErrorMessage === true,
			}));
			entries.push({ sessions, timeoutMs });
		} catch (error) {
			if (!continueOnFail) throw asNodeError(this, error, itemIndex);
			entries.push({ failure: itemFailure(this, error, itemIndex) });
		}
	}
	const waiting = entries.flatMap((entry) => ('sessions' in entry ? [entry] : []));
	if (waiting.length === 0) return entries.flatMap((entry) => ('failure' in entry ? [entry.failure] : []));

	const sessions = waiting.flatMap((entry) => entry.sessions);
	let outcomes: WaitResult[];
	try {
		outcomes = await waitForAllSessions.call(this, sessions, waiting[0].timeoutMs);
	} catch (error) {
		if (!continueOnFail) throw asNodeError(this, error, sessions[0].itemIndex);
		return entries.map((entry) =>
			'failure' in entry ? entry.failure : itemFailure(this, error, entry.sessions[0].itemIndex),
		);
	}
	for (const [index, outcome] of outcomes.entries()) {
		if (isUnknownSession(outcome) && !continueOnFail) throw asNodeError(this, outcome.error, sessions[index].itemIndex);
	}
	const outcomeOf = new Map(sessions.map((session, index) => [session, outcomes[index]]));

	return entries.flatMap((entry): INodeExecutionData[] =>
		'failure' in entry
			? [entry.failure]
			: entry.sessions.map((session) => {
					const outcome = outcomeOf.get(session) as WaitResult;
					return isUnknownSession(outcome)
						? itemFailure(this, outcome.error, session.itemIndex)
						: { json: waitedOutcome(outcome), pairedItem: { item: session.itemIndex } };
				}),
	);
}
