import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { call } from '../../../scripts/emulator/client';

jest.setTimeout(60_000);

const ROOT = resolve(__dirname, '../../..');

interface Ready {
	productionUrl: string;
	testUrl: string;
	username: string;
	password: string;
}

function startCli(
	directory: string,
	env: Record<string, string>,
): { child: ChildProcess; output: () => string } {
	let output = '';
	// tsx as a loader in this very Node process, so signals reach the emulator without a wrapper.
	const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/emulator/cli.ts'], {
		cwd: ROOT,
		env: { ...process.env, EMULATOR_READY_FILE: join(directory, 'ready.json'), ...env },
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
	return { child, output: () => output };
}

/** The ready file, once the banner written before it has also come through the pipe. */
async function waitForReady(
	file: string,
	child: ChildProcess,
	output: () => string,
): Promise<Ready> {
	while (!existsSync(file) || !output().includes('Press Ctrl+C to stop.')) {
		if (child.exitCode !== null) throw new Error(`emulator exited with ${child.exitCode}`);
		await new Promise((r) => setTimeout(r, 50));
	}
	return JSON.parse(readFileSync(file, 'utf8')) as Ready;
}

function exited(
	child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
	if (child.exitCode !== null) return Promise.resolve({ code: child.exitCode, signal: null });
	return new Promise((r) => child.once('exit', (code, signal) => r({ code, signal })));
}

describe('npm run emulator', () => {
	let directory: string;
	let running: ChildProcess | null = null;

	beforeEach(() => {
		directory = mkdtempSync(join(tmpdir(), 'emulator-cli-'));
	});

	afterEach(async () => {
		if (running && running.exitCode === null) {
			running.kill('SIGKILL');
			await exited(running);
		}
		running = null;
		rmSync(directory, { recursive: true, force: true });
	});

	it.each(['SIGTERM', 'SIGINT'] as const)(
		'starts a production and a test emulator, writes the ready file and stops on %s',
		async (signal) => {
			const { child, output } = startCli(directory, {
				EMULATOR_PORT: '0',
				EMULATOR_PROCESSING_MS: '0',
			});
			running = child;
			const ready = await waitForReady(join(directory, 'ready.json'), child, output);
			expect(ready).toEqual({
				productionUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
				testUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
				username: 'demo-integration',
				password: 'demo-password',
			});
			expect(ready.testUrl).not.toBe(ready.productionUrl);
			expect(output()).toContain(ready.productionUrl);
			expect(output()).toContain(ready.testUrl);

			const auth = { username: ready.username, password: ready.password };
			const noIdentifier = '<Products><Product><Name>No id</Name></Product></Products>';
			const outcomes: number[] = [];
			for (const url of [ready.productionUrl, ready.testUrl]) {
				expect((await call(url, 'GET', '/api/auth/me', { auth, customer: false })).status).toBe(
					200,
				);
				const id = (await call(url, 'PUT', '/api/xml', { auth, body: noIdentifier })).text;
				outcomes.push((await call(url, 'GET', `/api/status/${id}/result`, { auth })).status);
			}
			// Only the test environment validates product identifiers.
			expect(outcomes).toEqual([200, 301]);

			child.kill(signal);
			expect(await exited(child)).toEqual({ code: 0, signal: null });
			await expect(call(ready.productionUrl, 'GET', '/api/auth/me', { auth })).rejects.toThrow();
		},
	);

	it('refuses an invalid setting with a message and exit code 1', async () => {
		const { child, output } = startCli(directory, {
			EMULATOR_PORT: '0',
			EMULATOR_RATE_LIMIT_ANSWER: 'teapot',
		});
		running = child;
		expect(await exited(child)).toEqual({ code: 1, signal: null });
		expect(output()).toContain('EMULATOR_RATE_LIMIT_ANSWER must be one of');
		expect(existsSync(join(directory, 'ready.json'))).toBe(false);
	});
});
