/**
 * `npm run emulator`: a production and a test-environment emulator side by side, for demos and
 * scripts. Configuration through environment variables (see README.md next to this file).
 */
import { renameSync, writeFileSync } from 'node:fs';

import { DEFAULT_ACCOUNT, startEmulator, type Emulator, type EmulatorOptions } from './index';

function integer(name: string, fallback: number, minimum: number): number {
	const raw = process.env[name];
	if (raw === undefined || raw === '') return fallback;
	const value = Number(raw);
	if (!Number.isInteger(value) || value < minimum) {
		throw new Error(`${name} must be an integer >= ${minimum}, got "${raw}"`);
	}
	return value;
}

function choice<T extends string>(name: string, allowed: readonly T[]): T | undefined {
	const raw = process.env[name];
	if (raw === undefined || raw === '') return undefined;
	if (!(allowed as readonly string[]).includes(raw)) {
		throw new Error(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
	}
	return raw as T;
}

function optionsFromEnvironment(): EmulatorOptions & { port: number } {
	return {
		host: process.env.EMULATOR_HOST || '127.0.0.1',
		port: integer('EMULATOR_PORT', 8470, 0),
		processingMs: integer('EMULATOR_PROCESSING_MS', 3000, 0),
		bucketCapacity: integer('EMULATOR_BUCKET_CAPACITY', 50, 1),
		leakIntervalMs: integer('EMULATOR_LEAK_INTERVAL_MS', 5000, 1),
		rateLimitAnswer: choice('EMULATOR_RATE_LIMIT_ANSWER', [
			'429-seconds',
			'429-date',
			'429-none',
			'503',
		] as const),
		imageUploadLayout: choice('EMULATOR_IMAGE_UPLOAD_LAYOUT', [
			'objects',
			'strings',
			'text',
		] as const),
		imageFindLayout: choice('EMULATOR_IMAGE_FIND_LAYOUT', [
			'text',
			'json-string',
			'object',
		] as const),
		listLayout: choice('EMULATOR_LIST_LAYOUT', ['array', 'single'] as const),
		errorLocation: choice('EMULATOR_ERROR_LOCATION', ['absolute', 'relative'] as const),
		maxImageRequestBytes: integer('EMULATOR_MAX_IMAGE_REQUEST_BYTES', 0, 0),
		maxImagesPerRequest: integer('EMULATOR_MAX_IMAGES_PER_REQUEST', 0, 0),
	};
}

async function main(): Promise<void> {
	const options = optionsFromEnvironment();
	const started: Emulator[] = [];
	const stop = async () => {
		await Promise.all(started.map((e) => e.close()));
	};
	try {
		started.push(await startEmulator({ ...options, environment: 'production' }));
		// Port 0 asks for a free port for each emulator; otherwise the test one sits next door.
		const testPort = options.port === 0 ? 0 : options.port + 1;
		started.push(await startEmulator({ ...options, port: testPort, environment: 'test' }));
	} catch (error) {
		await stop();
		throw error;
	}
	const [production, test] = started;

	let stopping = false;
	const shutdown = (signal: NodeJS.Signals) => {
		if (stopping) return;
		stopping = true;
		process.stdout.write(`\n${signal} received, stopping the emulators.\n`);
		stop().then(
			() => process.exit(0),
			() => process.exit(1),
		);
	};
	process.on('SIGINT', shutdown);
	process.on('SIGTERM', shutdown);

	process.stdout.write(
		[
			'Product-data integration service emulator',
			`  production:        ${production.url}`,
			`  development/test:  ${test.url}`,
			`  username:          ${DEFAULT_ACCOUNT.username}`,
			`  password:          ${DEFAULT_ACCOUNT.password}`,
			`  customers:         ${DEFAULT_ACCOUNT.customers
				.map((c) => `${c.serviceId}${c.externalId ? ` / ${c.externalId}` : ''} (${c.name})`)
				.join(', ')}`,
			`  processing time:   ${options.processingMs} ms per document`,
			`  leaky bucket:      ${options.bucketCapacity} requests, 1 more every ${options.leakIntervalMs} ms`,
			'Press Ctrl+C to stop.',
			'',
		].join('\n'),
	);

	const readyFile = process.env.EMULATOR_READY_FILE;
	if (readyFile) {
		const ready = {
			productionUrl: production.url,
			testUrl: test.url,
			username: DEFAULT_ACCOUNT.username,
			password: DEFAULT_ACCOUNT.password,
		};
		// Written whole under another name first, so a reader never sees half a file.
		writeFileSync(`${readyFile}.partial`, JSON.stringify(ready, null, 2));
		renameSync(`${readyFile}.partial`, readyFile);
	}
}

main().catch((error: unknown) => {
	process.stderr.write(`emulator: ${error instanceof Error ? error.message : String(error)}\n`);
	process.exit(1);
});
