// What `n8n-node lint` does for the verified edition (verified/, scripts/verified.mjs), run with
// n8n's node tooling's own ESLint: its strict mode's check that eslint.config.mjs is its
// Cloud-support configuration unchanged, then that configuration over the package. `n8n-node lint`
// itself would run the ESLint it finds first from verified/ upwards, which in this project is the
// ESLint 8 the full edition's lint uses, not the ESLint 9 the configuration is written for.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const VERIFIED = fileURLToPath(new URL('../verified', import.meta.url));

// Installed by scripts/lint-verified.sh, which names its folder.
const nodeCliConfig = createRequire(join(process.env.NODE_CLI_HOME ?? '', 'package.json')).resolve(
	'@n8n/node-cli/eslint',
);
const nodeCli = dirname(dirname(dirname(nodeCliConfig)));
const { ESLint } = await import(pathToFileURL(createRequire(nodeCliConfig).resolve('eslint')).href);

const normalized = (text) => text.replace(/\s+/g, ' ').trim();
const expected = readFileSync(
	join(nodeCli, 'dist', 'template', 'templates', 'shared', 'default', 'eslint.config.mjs'),
	'utf8',
);
const manifest = JSON.parse(readFileSync(join(VERIFIED, 'package.json'), 'utf8'));
if (
	manifest.n8n?.strict !== true ||
	normalized(readFileSync(join(VERIFIED, 'eslint.config.mjs'), 'utf8')) !== normalized(expected)
) {
	console.error(
		"verified/ is not in n8n-node's strict mode with its Cloud-support eslint.config.mjs: run `npm run build:verified`",
	);
	process.exit(1);
}

// The configuration eslint.config.mjs names (checked above to be the template's), taken from the
// node tooling's own folder: verified/ resolves packages from the project's, which does not hold it.
const { config } = await import(pathToFileURL(nodeCliConfig).href);
const eslint = new ESLint({ cwd: VERIFIED, overrideConfigFile: true, overrideConfig: config });
const results = await eslint.lintFiles(['.']);
const report = await (await eslint.loadFormatter('stylish')).format(results);
if (report) console.log(report);
const problems = results.reduce((sum, result) => sum + result.errorCount + result.warningCount, 0);
if (problems > 0) process.exit(1);
console.log(
	`n8n-node lint (Cloud support, ESLint ${ESLint.version}) of the verified edition: no findings`,
);
