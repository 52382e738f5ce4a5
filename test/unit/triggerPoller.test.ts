import type { IDataObject } from 'n8n-workflow';

import { newState } from '../../nodes/ProductDataIntegrationTrigger/state';
import { readState, writeState } from '../../nodes/ProductDataIntegrationTrigger/storedState';

/**
 * The id a trigger is known by among those sharing answers: kept in its state across restarts, so
 * that it never takes back an answer it asked for itself; a state kept before it had one gets one.
 */
describe('trigger state: the poller id', () => {
	const now = Date.parse('2025-03-10T12:00:00Z');

	it('is random per trigger and survives being stored and read back', () => {
		const [one, two] = [newState('scope', now), newState('scope', now)];
		expect(one.poller).not.toEqual(two.poller);
		const staticData: IDataObject = {};
		writeState(staticData, one);
		const stored = JSON.parse(JSON.stringify(staticData)) as IDataObject;
		expect(readState(stored, 'scope')?.poller).toBe(one.poller);
	});

	it('is given to a state stored without one, and never taken from what is not an id', () => {
		const staticData: IDataObject = {};
		writeState(staticData, newState('scope', now));
		for (const poller of [undefined, 'x', { toString: () => 'x' }]) {
			const state = readState({ ...staticData, poller } as IDataObject, 'scope');
			expect(state?.poller).toMatch(
				/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
			);
		}
	});
});
