import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { getCustomerOverride } from '../../../shared/customer';
import {
	customerOption,
	includeErrorMessageOption,
	allowedInternalHostsOption,
	waitTimeoutOption,
} from '../../../shared/descriptions';
import {
	isUnfollowedSession,
	waitForSessions,
	type SessionToAwait,
	type WaitResult,
} from '../../../shared/sessions';
import type { ItemFailures } from '../itemErrors';
import { waitedOutcome, waitSettings, type WaitOptions } from '../waiting';
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
		hint: "Usually the sessionId field of a document upload's output; a list from an expression works too",
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
			waitTimeoutOption,
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['uploadSession'], operation: ['waitForCompletion'] } },
	properties,
);

/**
 * Every item's sessions and options are checked first; then all sessions of the run are polled
 * together (one request per pending session per round, backing off from 5 to 60 seconds), each for
 * as long as its item's timeout.
 */
export async function executeBatch(
	context: IExecuteFunctions,
	items: INodeExecutionData[],
	failures: ItemFailures,
): Promise<INodeExecutionData[]> {
	const entries: Array<{ sessions: SessionToAwait[] } | { failure: INodeExecutionData }> = [];
	for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
		try {
			const settings = waitSettings(
				context,
				itemIndex,
				context.getNodeParameter('options', itemIndex, {}) as WaitOptions,
				getCustomerOverride(context, itemIndex),
			);
			entries.push({
				sessions: getSessionIds(context, itemIndex).map((sessionId) => ({
					sessionId,
					...settings,
				})),
			});
		} catch (error) {
			entries.push({ failure: failures.output(error, [itemIndex]) });
		}
	}
	const sessions = entries.flatMap((entry) => ('sessions' in entry ? entry.sessions : []));
	if (sessions.length === 0)
		return entries.flatMap((entry) => ('failure' in entry ? [entry.failure] : []));

	let outcomes: WaitResult[];
	try {
		outcomes = await waitForSessions(context, sessions);
	} catch (error) {
		return entries.map((entry) =>
			'failure' in entry ? entry.failure : failures.output(error, [entry.sessions[0].itemIndex]),
		);
	}
	const outcomeOf = new Map(sessions.map((session, index) => [session, outcomes[index]]));

	return entries.flatMap((entry): INodeExecutionData[] =>
		'failure' in entry
			? [entry.failure]
			: entry.sessions.map((session) => {
					const outcome = outcomeOf.get(session) as WaitResult;
					return isUnfollowedSession(outcome)
						? failures.output(outcome.error, [session.itemIndex])
						: { json: waitedOutcome(outcome), pairedItem: { item: session.itemIndex } };
				}),
	);
}
