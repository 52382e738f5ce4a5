// n8n's gate for community packages (`@n8n/scan-community-package`, the version pinned in
// package.json) lints a package's source and its published tarball with
// `@n8n/eslint-plugin-community-nodes`' recommended rules and eslint-plugin-n8n-nodes-base, on
// ESLint 9. This runs the gate's own configuration (its `buildScanConfig`, its ESLint) over the same
// files, offline, after `npm run build`. It fails on every finding, warnings included, except the
// exceptions below; an exception that no longer matches anything fails too, so the list stays true.
//
//   node scripts/community-lint.mjs            the full edition: its source and its tarball
//   node scripts/community-lint.mjs verified   the verified edition (verified/, scripts/verified.mjs):
//                                              its source and its tarball, with no exception at all
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { build as buildVerified, pack as packVerified, VERIFIED_PACKAGE } from './verified.mjs';

/**
 * What the package keeps although the gate flags it: each buys a capability users need that cannot
 * be had inside the rules. A row covers one rule of the gate, about one module or global (`name`;
 * for runtime dependencies, their names), in the files listed (source paths; a finding in the
 * tarball counts for the source it was built from). The README says what they mean for n8n Cloud;
 * the verified edition does without every one of them.
 */
const FULL_EDITION_EXCEPTIONS = [
	{
		rule: 'no-restricted-imports',
		name: 'ioredis',
		files: ['nodes/shared/fullEdition/bucketStore.ts'],
		why:
			'In queue mode several n8n processes send for one account: the bucket they share must live outside each ' +
			'process, and n8n gives nodes no Redis connection of its own. ioredis is the client n8n itself uses.',
	},
	{
		rule: 'no-restricted-globals',
		name: 'process',
		files: ['nodes/shared/fullEdition/sharing.ts', 'nodes/shared/fullEdition/proxy.ts'],
		why:
			'Rate Limit Sharing "Automatic" shares the bucket through the Redis of n8n\'s own queue mode, so it reads ' +
			"n8n's settings (EXECUTIONS_MODE, QUEUE_BULL_REDIS_*) from the environment, and the command n8n was started with " +
			'(`n8n worker` runs in queue mode whatever the settings say) from its arguments; photos by URL go through the ' +
			'proxy n8n is told about (HTTP_PROXY, HTTPS_PROXY, NO_PROXY), which only the environment names. n8n gives ' +
			'nodes no other way to them.',
	},
	{
		rule: 'no-restricted-imports',
		name: 'form-data',
		files: ['nodes/shared/fullEdition/streamedMultipart.ts'],
		why:
			"Image upload sends the images of many items in one multipart request, each streamed from n8n's binary store, " +
			'never held whole; n8n-workflow has no multipart encoder and its HTTP layer streams form-data bodies.',
	},
	{
		rule: 'no-restricted-imports',
		name: 'stream',
		files: ['nodes/shared/fullEdition/streamedMultipart.ts'],
		why:
			"The multipart body needs each stored image as a Readable that opens n8n's binary stream only when sent and " +
			'hashes it on the way; without it every image of an item would be read into memory first.',
	},
	...['node:dns', 'node:http', 'node:https'].map((name) => ({
		rule: 'no-restricted-imports',
		name,
		files: ['nodes/shared/fullEdition/directExchange.ts'],
		why:
			'A photo URL or an error document on another host comes from data: the address it reaches must be judged ' +
			"in the connection's own DNS lookup (no second resolution a rebinding name could answer otherwise), and " +
			"n8n's request helper takes no lookup of a node's; the verified edition judges with n8n's egress filter instead.",
	})),
	{
		rule: 'no-restricted-imports',
		name: 'undici',
		files: ['nodes/shared/fullEdition/proxy.ts'],
		why:
			'Behind a company proxy the only way out is the proxy: a photo URL must go through it, https through CONNECT, ' +
			"and Node's own client has no proxy support; undici is the client Node's fetch and n8n's own proxy support use.",
	},
	{
		rule: 'no-runtime-dependencies',
		name: 'form-data, ioredis, undici',
		files: ['package.json'],
		why: 'The three modules above; nothing else may become a runtime dependency.',
	},
];

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const edition = process.argv[2] ?? 'full';
if (edition !== 'full' && edition !== 'verified') {
	console.error('usage: node scripts/community-lint.mjs [verified]');
	process.exit(2);
}
// n8n Cloud takes a package only when the scanner finds nothing: the verified edition has no exception.
const EXCEPTIONS = edition === 'verified' ? [] : FULL_EDITION_EXCEPTIONS;
// Where the scanner finds the edition's source: the folder whose package.json has its name.
const SOURCE = edition === 'verified' ? VERIFIED_PACKAGE : ROOT;
// The tarball `npm test` packs once for each edition.
const PACKED = edition === 'verified' ? process.env.E2E_VERIFIED_TGZ : process.env.E2E_PACKAGE_TGZ;
// What the gate lints in the tarball (the source patterns it exports).
const TARBALL_PATTERNS = ['**/*.js', 'package.json'];

const requireHere = createRequire(import.meta.url);
const scannerPath = requireHere.resolve('@n8n/scan-community-package/scanner/scanner.mjs');
const requireFromScanner = createRequire(scannerPath);
// Importing the scanner makes a temporary folder; without this it would outlive the run.
requireFromScanner('tmp').setGracefulCleanup();
const { buildScanConfig, SOURCE_FILE_PATTERNS } = await import(pathToFileURL(scannerPath).href);
const { ESLint } = await import(pathToFileURL(requireFromScanner.resolve('eslint')).href);
const glob = requireFromScanner('fast-glob');

const RULE_PREFIX = '@n8n/community-nodes/';

/** What a finding is about: the module or global its message quotes, or the runtime dependencies. */
function nameOf(message, directory) {
	if (message.ruleId === `${RULE_PREFIX}no-runtime-dependencies`) {
		const { dependencies = {} } = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8'));
		return Object.keys(dependencies).sort().join(', ');
	}
	return /'([^']+)'/.exec(message.message)?.[1];
}

/** The source file a linted file stands for: a built file of the tarball counts as its source. */
function sourceOf(file) {
	const built = /^dist\/(.+)\.js$/.exec(file);
	return built ? `${built[1]}.ts` : file;
}

function exceptionFor(directory, file, message) {
	const name = nameOf(message, directory);
	return EXCEPTIONS.find(
		(exception) =>
			`${RULE_PREFIX}${exception.rule}` === message.ruleId &&
			exception.name === name &&
			exception.files.includes(sourceOf(file)),
	);
}

async function lint(directory, patterns, config) {
	const eslint = new ESLint({
		cwd: directory,
		allowInlineConfig: false,
		overrideConfigFile: true,
		overrideConfig: config,
	});
	const files = glob.sync(patterns, {
		cwd: directory,
		absolute: true,
		ignore: ['node_modules/**', '**/package-lock.json'],
	});
	return { eslint, results: await eslint.lintFiles(files) };
}

/**
 * The packed package, unpacked: the tarball `npm test` packed (E2E_PACKAGE_TGZ, E2E_VERIFIED_TGZ),
 * or a fresh pack of the build (the verified edition: built first).
 */
function packTarball() {
	const folder = mkdtempSync(join(tmpdir(), 'community-lint-'));
	let tarball = PACKED;
	if (!tarball && edition === 'verified') {
		buildVerified();
		tarball = packVerified(folder);
	} else if (!tarball) {
		execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', folder], {
			cwd: ROOT,
			stdio: ['ignore', 'ignore', 'inherit'],
		});
		tarball = join(
			folder,
			readdirSync(folder).find((name) => name.endsWith('.tgz')),
		);
	}
	execFileSync('tar', ['-xzf', tarball, '--strip-components=1'], { cwd: folder });
	if (!PACKED) rmSync(tarball);
	return folder;
}

const config = await buildScanConfig();
const tarball = packTarball();
const used = new Set();
let problems = 0;
try {
	for (const [leg, directory, patterns] of [
		['source', SOURCE, SOURCE_FILE_PATTERNS],
		['tarball', tarball, TARBALL_PATTERNS],
	]) {
		const { eslint, results } = await lint(directory, patterns, config);
		for (const result of results) {
			const file = relative(directory, result.filePath);
			result.filePath = leg === 'source' ? file : `tarball: ${file}`;
			result.messages = result.messages.filter((message) => {
				const exception = exceptionFor(directory, file, message);
				if (exception) used.add(`${EXCEPTIONS.indexOf(exception)} ${sourceOf(file)}`);
				return !exception;
			});
			result.errorCount = result.messages.filter((message) => message.severity === 2).length;
			result.warningCount = result.messages.length - result.errorCount;
			result.fatalErrorCount = 0;
			result.fixableErrorCount = 0;
			result.fixableWarningCount = 0;
			problems += result.messages.length;
		}
		const report = await (await eslint.loadFormatter('stylish')).format(results);
		if (report) console.log(`n8n community-package lint, ${edition} edition, ${leg}:${report}`);
	}
} finally {
	rmSync(tarball, { recursive: true, force: true });
}

const stale = EXCEPTIONS.flatMap((exception, index) =>
	exception.files
		.filter((file) => !used.has(`${index} ${file}`))
		.map((file) => `${file}: ${exception.rule} '${exception.name}'`),
);
for (const entry of stale) console.log(`Exception no longer needed, remove it: ${entry}`);
if (problems > 0 || stale.length > 0) process.exit(1);
console.log(
	EXCEPTIONS.length === 0
		? `n8n community-package lint, ${edition} edition: no findings, no exceptions`
		: `n8n community-package lint, ${edition} edition: no findings (${EXCEPTIONS.length} exceptions, each with its reason, in scripts/community-lint.mjs)`,
);
