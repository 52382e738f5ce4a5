import type { IDataObject } from 'n8n-workflow';

import type { TriggerState } from './state';
import { readState, storedState } from './storedState';

/**
 * Where a trigger started: the uploads its first poll listed, which are history, kept a second time
 * in the workflow's global static data.
 *
 * Why: on n8n's durable scheduler with durable cursors (n8n 2.41), the node's static data is a copy
 * of a cursor that n8n stores only when a scheduled poll ends, or when a poll emits. The poll n8n
 * runs at activation is neither: when it emits nothing, as a first poll never does, its state is
 * dropped, the next poll finds none and takes the uploads of the meantime for history too. The
 * global static data is not part of the cursor: n8n saves it right after activating.
 * A later poll that finds no state of its own starts from there, if it was left recently; once the
 * node's own state has been stored, the copy is removed.
 */
const STARTING_POINTS_KEY = 'productDataIntegrationTriggerStarts';

/** A starting point older than this is not used: it belongs to an earlier activation. */
const MIN_STARTING_POINT_AGE_LIMIT_MS = 60 * 60_000;

interface StartingPoint extends IDataObject {
	node: string;
	state: IDataObject;
}

function startingPoints(workflowData: IDataObject): StartingPoint[] {
	const stored = workflowData[STARTING_POINTS_KEY];
	if (!Array.isArray(stored)) return [];
	return (stored as unknown[]).filter(
		(entry): entry is StartingPoint =>
			typeof entry === 'object' &&
			entry !== null &&
			typeof (entry as IDataObject).node === 'string' &&
			typeof (entry as IDataObject).state === 'object' &&
			(entry as IDataObject).state !== null,
	);
}

/** Keeps the first poll's state (its listings, nothing pending) as the node's starting point. */
export function leaveStartingPoint(
	workflowData: IDataObject,
	nodeId: string,
	state: TriggerState,
): void {
	const others = startingPoints(workflowData).filter((entry) => entry.node !== nodeId);
	const start: StartingPoint = {
		node: nodeId,
		state: storedState({ ...state, pending: new Map() }),
	};
	workflowData[STARTING_POINTS_KEY] = [...others, start];
}

/**
 * The node's starting point, when one of its scope was left within `ageLimitMs` (at least an hour)
 * before `now`.
 */
export function findStartingPoint(
	workflowData: IDataObject,
	nodeId: string,
	scope: string,
	now: number,
	ageLimitMs: number,
): TriggerState | undefined {
	const entry = startingPoints(workflowData).find((candidate) => candidate.node === nodeId);
	const state = entry && readState(entry.state, scope);
	if (!state || now - state.listedAt > Math.max(ageLimitMs, MIN_STARTING_POINT_AGE_LIMIT_MS))
		return undefined;
	return state;
}

/** Removes the node's starting point, if there is one (static data is changed only then). */
export function dropStartingPoint(workflowData: IDataObject, nodeId: string): void {
	const entries = startingPoints(workflowData);
	if (!entries.some((entry) => entry.node === nodeId)) return;
	const others = entries.filter((entry) => entry.node !== nodeId);
	if (others.length > 0) workflowData[STARTING_POINTS_KEY] = others;
	else delete workflowData[STARTING_POINTS_KEY];
}
