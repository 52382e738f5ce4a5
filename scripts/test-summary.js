// @ts-check
/**
 * The closing lines of `npm test` (scripts/test.sh): one line per jest tier, then the last line
 * `N passed, N failed, N skipped` summed over all of them, from the results each jest run wrote
 * (`--json --outputFile`). A tier without results (it crashed, or never ran because a step before
 * it failed), a test file that failed to run, and a run that failed with no failed test (a global
 * set-up or tear-down) each count as one failed test, and their tier's line says why.
 *
 *   node scripts/test-summary.js <tier>:<exit code>:<results file> ...
 *
 * The exit code is jest's, or `-` for a tier that did not run. Exits 1 when anything failed.
 */
const { readFileSync } = require('node:fs');
const { relative } = require('node:path');

/**
 * The part of jest's aggregated results (`--json`) read here.
 * @typedef {{
 *   numPassedTests: number, numFailedTests: number, numPendingTests: number, numTodoTests?: number,
 *   testResults?: Array<{ name: string, status: string, message?: string,
 *     assertionResults?: Array<{ status: string }> }>
 * }} JestResults
 * @typedef {{ name: string, exitCode: number | undefined, results: JestResults | undefined }} Tier
 * @typedef {{ passed: number, failed: number, skipped: number }} Counts
 */

/** @param {unknown} value */
function isCount(value) {
	return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/**
 * A results file's content as jest writes it, or undefined where it is missing, not JSON, or not
 * jest's aggregated results.
 * @param {string | undefined} text
 * @returns {JestResults | undefined}
 */
function parseResults(text) {
	if (text === undefined) return undefined;
	try {
		const results = JSON.parse(text);
		if (
			results &&
			isCount(results.numPassedTests) &&
			isCount(results.numFailedTests) &&
			isCount(results.numPendingTests)
		)
			return results;
	} catch {
		// Cut short: jest was stopped while writing it.
	}
	return undefined;
}

/**
 * One tier's counts and the reasons it failed beyond its failed tests.
 * @param {Tier} tier
 * @param {string} root the folder test file names are given relative to
 * @returns {Counts & { problems: string[] }}
 */
function tierCounts({ exitCode, results }, root) {
	if (!results) {
		const why =
			exitCode === undefined
				? 'did not run'
				: `left no results (jest exited with code ${exitCode})`;
		return { passed: 0, failed: 1, skipped: 0, problems: [why] };
	}
	const problems = [];
	let failed = results.numFailedTests;
	// A file jest marks failed without a failed test of its own did not run to its end: it did not
	// compile, a module it imports threw, or a hook outside its tests failed.
	for (const file of results.testResults ?? []) {
		if (file.status !== 'failed') continue;
		if ((file.assertionResults ?? []).some((test) => test.status === 'failed')) continue;
		failed += 1;
		problems.push(`${relative(root, file.name)} failed to run${firstLine(file.message)}`);
	}
	if (exitCode !== 0 && failed === 0) {
		failed = 1;
		problems.push(`jest exited with code ${exitCode} without a failed test`);
	}
	return {
		passed: results.numPassedTests,
		failed,
		skipped: results.numPendingTests + (results.numTodoTests ?? 0),
		problems,
	};
}

/**
 * The first line of a message jest formatted (colours taken out), after a colon; or nothing.
 * @param {string | undefined} message
 */
function firstLine(message) {
	// eslint-disable-next-line no-control-regex
	const lines = (message ?? '').replace(/\u001b\[[0-9;]*m/g, '').split('\n');
	const line = lines
		.map((text) => text.trim())
		.find((text) => text !== '' && !text.startsWith('●'));
	return line ? `: ${line}` : '';
}

/** @param {Counts} counts */
function countsLine({ passed, failed, skipped }) {
	return `${passed} passed, ${failed} failed, ${skipped} skipped`;
}

/**
 * The lines that close `npm test`, the total last, and whether everything passed.
 * @param {Tier[]} tiers
 * @param {string} root
 * @returns {{ lines: string[], ok: boolean }}
 */
function summarize(tiers, root) {
	const total = { passed: 0, failed: 0, skipped: 0 };
	const lines = tiers.map((tier) => {
		const counts = tierCounts(tier, root);
		total.passed += counts.passed;
		total.failed += counts.failed;
		total.skipped += counts.skipped;
		const why = counts.problems.length > 0 ? ` (${counts.problems.join('; ')})` : '';
		return `${tier.name}: ${countsLine(counts)}${why}`;
	});
	lines.push(countsLine(total));
	return { lines, ok: total.failed === 0 };
}

/**
 * A tier as the command line names it: `<tier>:<exit code or ->:<results file>`.
 * @param {string} argument
 * @returns {Tier}
 */
function readTier(argument) {
	const match = /^([^:]+):(-|\d+):(.+)$/.exec(argument);
	if (!match) throw new Error(`Not <tier>:<exit code>:<results file>: "${argument}"`);
	const [, name, code, file] = match;
	let text;
	try {
		text = readFileSync(file, 'utf8');
	} catch {
		text = undefined;
	}
	return { name, exitCode: code === '-' ? undefined : Number(code), results: parseResults(text) };
}

if (require.main === module) {
	const { lines, ok } = summarize(process.argv.slice(2).map(readTier), process.cwd());
	console.log(lines.join('\n'));
	process.exitCode = ok ? 0 : 1;
}

module.exports = { parseResults, readTier, summarize, tierCounts };
