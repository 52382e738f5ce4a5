/**
 * The emulator as the tests start it, and the credential that reaches it.
 *
 *   useEmulator(options?, lifetime?): { emulator, credentials, restart }
 *     One emulator for the enclosing describe block (or file), started with `options` (most files:
 *     FAST_BUCKET) before its tests, reset before each test, closed after them; with lifetime
 *     'test', a fresh one (a new address, so a new account) for each test. `credentials(overrides?)`
 *     is the credential of its default account, metered at the emulator's own bucket terms.
 *   startedEmulators(): (options?) => Promise<Emulator>
 *     Emulators started on demand within the block, each a new account whose penalties no other
 *     test inherits, all closed after the block's tests.
 *   fastCredentials(service, overrides?): the default account's credential for any server
 *     (an emulator started by hand, a local test server), metered at FAST_BUCKET's terms.
 *   customRateLimit(terms): the credential's Custom Rate Limit fields for a bucket's terms.
 */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { startEmulator, type Emulator, type EmulatorOptions } from '../../scripts/emulator';
import { emulatorCredentials } from '../../scripts/n8n/in-process';

/**
 * A fast bucket, for the emulator and the credential alike: a file full of requests never waits
 * for the service's real leak of one request every 5 s.
 */
export const FAST_BUCKET = { bucketCapacity: 50, leakIntervalMs: 20 } as const;

export interface BucketTerms {
	bucketCapacity: number;
	leakIntervalMs: number;
}

/** The credential's Custom Rate Limit set to `terms`. */
export function customRateLimit({
	bucketCapacity,
	leakIntervalMs,
}: BucketTerms): ICredentialDataDecryptedObject {
	return { customRateLimit: true, bucketCapacity, leakIntervalSeconds: leakIntervalMs / 1000 };
}

/**
 * The emulator's default account at `service`, metered at FAST_BUCKET's terms; `overrides` win
 * (loosely typed: tests also hand in fields of the wrong type).
 */
export function fastCredentials(
	service: Pick<Emulator, 'url'>,
	overrides: Record<string, unknown> = {},
): ICredentialDataDecryptedObject {
	return emulatorCredentials(service, {
		...customRateLimit(FAST_BUCKET),
		...(overrides as ICredentialDataDecryptedObject),
	});
}

/** Every request the emulator counted since its last reset: each one spent the account's bucket. */
export function requestsSpent(emulator: Pick<Emulator, 'stats'>): number {
	return Object.values(emulator.stats().requests).reduce((sum, count) => sum + count, 0);
}

export interface EmulatorFixture {
	/** The emulator of the running test: stands for the one started last, so it can be held in a const. */
	emulator: Emulator;
	/** Its default account, metered at the emulator's own bucket terms; `overrides` win. */
	credentials(overrides?: Record<string, unknown>): ICredentialDataDecryptedObject;
	/** Closes the emulator and starts another with `options` added, for the rest of the test (or block). */
	restart(options: EmulatorOptions): Promise<void>;
}

export function useEmulator(
	options: EmulatorOptions = {},
	lifetime: 'block' | 'test' = 'block',
): EmulatorFixture {
	let started: Emulator | undefined;
	const current = (): Emulator => {
		if (!started) throw new Error('The emulator runs only while the tests of its block run');
		return started;
	};
	const start = async (more: EmulatorOptions = {}) => {
		started = await startEmulator({ ...options, ...more });
	};
	const stop = async () => {
		await started?.close();
		started = undefined;
	};
	if (lifetime === 'test') {
		beforeEach(async () => await start());
		afterEach(stop);
	} else {
		beforeAll(async () => await start());
		beforeEach(() => current().reset());
		afterAll(stop);
	}
	// Every member of Emulator is a value or a closure, so reading it from the current one is enough.
	const emulator = new Proxy({} as Emulator, {
		get: (_target, key) => Reflect.get(current(), key) as unknown,
	});
	return {
		emulator,
		credentials: (overrides = {}) =>
			emulatorCredentials(emulator, {
				...customRateLimit(current().options),
				...(overrides as ICredentialDataDecryptedObject),
			}),
		restart: async (more) => {
			await stop();
			await start(more);
		},
	};
}

export function startedEmulators(): (options?: EmulatorOptions) => Promise<Emulator> {
	const opened: Emulator[] = [];
	afterAll(async () => {
		await Promise.all(opened.splice(0).map(async (service) => await service.close()));
	});
	return async (options = {}) => {
		const service = await startEmulator(options);
		opened.push(service);
		return service;
	};
}
