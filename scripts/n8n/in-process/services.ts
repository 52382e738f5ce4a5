// Process-wide n8n services, set up once per test file (jest gives each file its own modules).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Logger } from '@n8n/backend-common';
import { Container } from '@n8n/di';
import { BinaryDataConfig, BinaryDataService, DataDeduplicationService } from 'n8n-core';
import { LoggerProxy } from 'n8n-workflow';

import { deduplicator } from './deduplication';
import { RecordingLogger } from './logging';

let userFolder: string | undefined;
const removeUserFolder = () => {
	if (userFolder) rmSync(userFolder, { recursive: true, force: true });
};
// Jest runs many test files in one process: an exit listener per file would pile up.
if (typeof afterAll === 'function') afterAll(removeUserFolder);
else process.once('exit', removeUserFolder);

let ready: Promise<void> | undefined;

/** What n8n-core reads as a node's context is made (its user folder, the logger); at once, for contexts made outside a run. */
export function setUpSettings(): void {
	if (userFolder) return;
	// n8n reads its user folder (settings, binary data files) when the container first builds
	// InstanceSettings: a throw-away folder keeps tests away from a real ~/.n8n. Made on first
	// use, so a test file that fails to load leaves nothing behind.
	userFolder = mkdtempSync(join(tmpdir(), 'n8n-harness-'));
	process.env.N8N_USER_FOLDER = userFolder;
	const logger = new RecordingLogger();
	// n8n's Logger class has private winston internals; the recorder has its public surface.
	Container.set(Logger, logger as unknown as Logger);
	LoggerProxy.init(logger);
}

export function setUp(): Promise<void> {
	ready ??= (async () => {
		setUpSettings();
		Container.get(BinaryDataConfig).mode = 'default';
		await Container.get(BinaryDataService).init();
		await DataDeduplicationService.init(deduplicator);
	})();
	return ready;
}

export async function setBinaryDataMode(mode: 'default' | 'filesystem'): Promise<void> {
	await setUp();
	Container.get(BinaryDataConfig).mode = mode;
	await Container.get(BinaryDataService).init();
}
