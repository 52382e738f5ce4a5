/**
 * The credential's numeric settings the transport reads, checked where they are read: a value out
 * of range fails before any request, naming its field; one within range works as written.
 */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { ProductDataIntegrationApi } from '../../credentials/ProductDataIntegrationApi.credentials';
import { createContext } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { callService, failure } from '../helpers/service';

const { emulator: service, credentials } = useEmulator(FAST_BUCKET);

async function me(overrides: ICredentialDataDecryptedObject) {
	return await callService(createContext({ credentials: credentials(overrides) }), {
		method: 'GET',
		path: '/api/auth/me',
		itemIndex: 0,
	});
}

describe('settings out of range fail before any request, naming the field', () => {
	it.each([
		[
			'a Request Timeout beyond what a timer holds',
			{ requestTimeoutSeconds: 2_147_484 },
			"The credential's Request Timeout (Seconds) must be a number from 1 to 3600, not 2147484",
		],
		[
			'a Request Timeout of an hour and a second',
			{ requestTimeoutSeconds: 3601 },
			"The credential's Request Timeout (Seconds) must be a number from 1 to 3600, not 3601",
		],
		[
			'a Request Timeout under a second',
			{ requestTimeoutSeconds: 0.5 },
			"The credential's Request Timeout (Seconds) must be a number from 1 to 3600, not 0.5",
		],
		[
			'a Request Timeout that is no number',
			{ requestTimeoutSeconds: 'soon' },
			'The credential\'s Request Timeout (Seconds) must be a number from 1 to 3600, not "soon"',
		],
		[
			'a Bucket Capacity with a fraction',
			{ bucketCapacity: 2.5 },
			"The credential's Bucket Capacity must be a whole number from 1 to 10000, not 2.5",
		],
		[
			'a Bucket Capacity of 0',
			{ bucketCapacity: 0 },
			"The credential's Bucket Capacity must be a whole number from 1 to 10000, not 0",
		],
		[
			'a Leak Interval beyond 15 minutes',
			{ leakIntervalSeconds: 901 },
			"The credential's Leak Interval (Seconds) must be a number from 0.001 to 900, not 901",
		],
		[
			'a Leak Interval of 0',
			{ leakIntervalSeconds: 0 },
			"The credential's Leak Interval (Seconds) must be a number from 0.001 to 900, not 0",
		],
	])('%s', async (_name, overrides, message) => {
		const error = await failure(me(overrides));
		expect(error.message).toBe(message);
		expect(error.name).toBe('NodeOperationError');
		expect(service.stats().requests).toEqual({});
	});
});

describe('settings within range work as written', () => {
	it('a fractional Request Timeout is a timeout of whole milliseconds, not a RangeError', async () => {
		expect((await me({ requestTimeoutSeconds: 1.0005 })).statusCode).toBe(200);
	});

	it('empty settings are their defaults', async () => {
		expect(
			(await me({ requestTimeoutSeconds: '', bucketCapacity: '', leakIntervalSeconds: '' }))
				.statusCode,
		).toBe(200);
	});

	it('the editor offers the same ranges', () => {
		const fields = new Map(
			new ProductDataIntegrationApi().properties.map((property) => [property.name, property]),
		);
		expect(fields.get('requestTimeoutSeconds')).toMatchObject({
			default: 60,
			typeOptions: { minValue: 1, maxValue: 3600 },
		});
		expect(fields.get('bucketCapacity')).toMatchObject({
			default: 50,
			typeOptions: { minValue: 1, maxValue: 10_000 },
		});
		expect(fields.get('leakIntervalSeconds')).toMatchObject({
			default: 5,
			typeOptions: { minValue: 0.001, maxValue: 900 },
		});
	});
});
