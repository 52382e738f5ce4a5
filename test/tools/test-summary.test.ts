/**
 * The closing line of `npm test` (scripts/test-summary.js, run by scripts/test.sh), on results jest
 * itself writes for fixture test files: a passing tier with a skipped and a to-do test, a failing
 * tier, a tier that crashed without results and one that never ran.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { summarize } from '../../scripts/test-summary';

const ROOT = join(__dirname, '..', '..');
const SUMMARY = join(ROOT, 'scripts', 'test-summary.js');

const FIXTURES: Record<string, Record<string, string>> = {
	passing: {
		'passing.test.js': [
			"test('adds', () => expect(1 + 1).toBe(2));",
			"test.skip('is skipped', () => {});",
			"test.todo('is to do');",
		].join('\n'),
	},
	failing: {
		'failing.test.js': [
			"test('passes', () => {});",
			"test('fails', () => expect(1).toBe(2));",
		].join('\n'),
		// Does not parse: the file fails to run, with no test of its own.
		'broken.test.js': "test('never runs', () => {\n",
		// Its test passes, its tear-down fails.
		'hook.test.js': [
			"afterAll(() => { throw new Error('tear-down broke'); });",
			"test('passes', () => {});",
		].join('\n'),
	},
};

interface Run {
	lines: string[];
	status: number | null;
}

describe('the closing line of npm test', () => {
	let folder: string;
	/** The results file and jest's exit code of each fixture tier. */
	const tiers: Record<string, { file: string; exitCode: number }> = {};

	beforeAll(() => {
		folder = mkdtempSync(join(tmpdir(), 'test-summary-'));
		const jest = require.resolve('jest/bin/jest', { paths: [ROOT] });
		for (const [tier, files] of Object.entries(FIXTURES)) {
			const dir = join(folder, tier);
			mkdirSync(dir);
			for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
			const file = join(folder, `${tier}.json`);
			// As scripts/test.sh runs a tier, on files of its own.
			const run = spawnSync(
				process.execPath,
				[
					jest,
					'--ci',
					'--rootDir',
					dir,
					'--config',
					'{"transform":{}}',
					'--json',
					`--outputFile=${file}`,
				],
				{ cwd: folder, encoding: 'utf8' },
			);
			tiers[tier] = { file, exitCode: run.status ?? 1 };
		}
	}, 60_000);

	afterAll(() => {
		rmSync(folder, { recursive: true, force: true });
	});

	function summary(...args: string[]): Run {
		const run = spawnSync(process.execPath, [SUMMARY, ...args], { cwd: folder, encoding: 'utf8' });
		return { lines: run.stdout.trimEnd().split('\n'), status: run.status };
	}

	const tier = (name: string): string => `${name}:${tiers[name].exitCode}:${tiers[name].file}`;

	test('sums passing tiers into one last line, a skipped and a to-do test counted as skipped', () => {
		expect(tiers.passing.exitCode).toBe(0);

		const run = summary(tier('passing'), tier('passing'));

		expect(run.lines).toEqual([
			'passing: 1 passed, 0 failed, 2 skipped',
			'passing: 1 passed, 0 failed, 2 skipped',
			'2 passed, 0 failed, 4 skipped',
		]);
		expect(run.status).toBe(0);
	});

	test('a failing tier: its failed test, a file that failed to run and a failed tear-down each count, and the line is still last', () => {
		expect(tiers.failing.exitCode).toBe(1);

		const run = summary(tier('passing'), tier('failing'));

		expect(run.lines).toHaveLength(3);
		expect(run.lines[1]).toMatch(/^failing: 2 passed, 3 failed, 0 skipped \(/);
		expect(run.lines[1]).toContain(
			'broken.test.js failed to run: Jest encountered an unexpected token',
		);
		expect(run.lines[1]).toContain('hook.test.js failed to run: tear-down broke');
		expect(run.lines[2]).toBe('3 passed, 3 failed, 2 skipped');
		expect(run.status).toBe(1);
	});

	test('a tier that crashed without results and one that never ran count as failed, each named', () => {
		const missing = join(folder, 'missing.json');
		const cut = join(folder, 'cut.json');
		writeFileSync(cut, '{"numPassedTests": 4, "numFail');

		const run = summary(
			tier('passing'),
			`e2e:1:${missing}`,
			`cut:137:${cut}`,
			`e2e-verified:-:${missing}`,
		);

		expect(run.lines).toEqual([
			'passing: 1 passed, 0 failed, 2 skipped',
			'e2e: 0 passed, 1 failed, 0 skipped (left no results (jest exited with code 1))',
			'cut: 0 passed, 1 failed, 0 skipped (left no results (jest exited with code 137))',
			'e2e-verified: 0 passed, 1 failed, 0 skipped (did not run)',
			'1 passed, 3 failed, 2 skipped',
		]);
		expect(run.status).toBe(1);
	});

	test('a run jest failed without a failed test (a global set-up or tear-down) counts as one failed', () => {
		const results = { numPassedTests: 5, numFailedTests: 0, numPendingTests: 0, testResults: [] };

		expect(summarize([{ name: 'e2e', exitCode: 1, results }], folder)).toEqual({
			lines: [
				'e2e: 5 passed, 1 failed, 0 skipped (jest exited with code 1 without a failed test)',
				'5 passed, 1 failed, 0 skipped',
			],
			ok: false,
		});
	});

	test('a malformed tier argument is refused', () => {
		const run = spawnSync(process.execPath, [SUMMARY, 'unit'], { encoding: 'utf8' });
		expect(run.status).not.toBe(0);
		expect(run.stderr).toContain('Not <tier>:<exit code>:<results file>: "unit"');
	});

	test('scripts/test.sh closes with it', () => {
		expect(readFileSync(join(ROOT, 'scripts', 'test.sh'), 'utf8')).toContain(
			'node scripts/test-summary.js',
		);
	});
});
