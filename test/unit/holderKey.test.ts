import * as crypto from 'crypto';
import type { IExecuteFunctions } from 'n8n-workflow';

import { closeStores } from '../../nodes/shared/fullEdition/sharedRegistry';
import { knownImagesOf } from '../../nodes/shared/knownImages';
import { deriveHolderOf, holderKey } from '../../nodes/shared/transport/account';

jest.mock('crypto', () => {
	const actual = jest.requireActual<typeof import('crypto')>('crypto');
	return { ...actual, scrypt: jest.fn(actual.scrypt), scryptSync: jest.fn(actual.scryptSync) };
});

const credentials = {
	baseUrl: 'https://derive.example.com',
	username: 'bob',
	password: 'bob-secret',
};

describe("a holder's key", () => {
	it('is derived once per holder, off the event loop: concurrent first uses share one derivation', async () => {
		const keys = await Promise.all([
			deriveHolderOf(credentials),
			deriveHolderOf(credentials),
			deriveHolderOf({ ...credentials }),
		]);

		expect(new Set(keys).size).toBe(1);
		expect(holderKey(credentials.baseUrl, credentials.username, credentials.password)).toBe(
			keys[0],
		);
		expect(crypto.scrypt).toHaveBeenCalledTimes(1);
		expect(crypto.scryptSync).toHaveBeenCalledTimes(0);
	});

	it('asked for first outside a node run, is derived once, where it is asked: no second derivation runs beside it', async () => {
		jest.mocked(crypto.scrypt).mockClear();
		jest.mocked(crypto.scryptSync).mockClear();
		const first = { ...credentials, username: 'carol' };
		const key = holderKey(first.baseUrl, first.username, first.password);
		expect(await deriveHolderOf(first)).toBe(key);
		expect(crypto.scryptSync).toHaveBeenCalledTimes(1);
		expect(crypto.scrypt).toHaveBeenCalledTimes(0);
	});
});

describe('the known images of a holder', () => {
	const saved = { ...process.env };

	afterAll(async () => {
		process.env = saved;
		await closeStores();
	});

	/** One node run of Image Upload: the few parts of n8n's context that finding its known images reads. */
	function imageUploadRun(): IExecuteFunctions {
		const log = () => undefined;
		return {
			getCredentials: async () => ({ ...credentials, baseUrl: 'https://known.example.com' }),
			getNode: () => ({ id: 'upload', name: 'Upload', type: 'productDataIntegration' }),
			getExecutionCancelSignal: () => undefined,
			logger: { debug: log, info: log, warn: log, error: log },
		} as unknown as IExecuteFunctions;
	}

	it('derive the key once, off the event loop, for two runs that first use them at once in queue mode', async () => {
		// Redis is named, not asked: finding the known images connects to nothing.
		process.env.EXECUTIONS_MODE = 'queue';
		process.env.QUEUE_BULL_REDIS_HOST = '127.0.0.1';
		process.env.QUEUE_BULL_REDIS_PORT = '6390';
		jest.mocked(crypto.scrypt).mockClear();
		jest.mocked(crypto.scryptSync).mockClear();

		const known = await Promise.all([
			knownImagesOf(imageUploadRun(), 0, undefined, 7),
			knownImagesOf(imageUploadRun(), 0, undefined, 7),
		]);

		expect(known.map((memory) => memory.shared)).toEqual([true, true]);
		expect(crypto.scrypt).toHaveBeenCalledTimes(1);
		expect(crypto.scryptSync).toHaveBeenCalledTimes(0);
	});
});
