/**
 * Every npm script runs as written on a fresh clone: each goes through a script of the project that
 * puts Node 24 and the project's dependencies in place (scripts/toolchain.sh, then
 * ensure_dependencies) before it runs a tool, or through other npm scripts that do.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..', '..');
const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
	scripts: Record<string, string>;
};

/** The steps of a command joined by `&&`, those within quotes left whole. */
function stepsOf(command: string): string[] {
	const steps = [''];
	let quote: string | undefined;
	for (let index = 0; index < command.length; index++) {
		const char = command[index];
		if (quote) {
			if (char === quote) quote = undefined;
		} else if (char === "'" || char === '"') {
			quote = char;
		} else if (command.startsWith(' && ', index)) {
			steps.push('');
			index += 3;
			continue;
		}
		steps[steps.length - 1] += char;
	}
	return steps;
}

/** The script file a command starts with (after variable assignments), or none. */
function startsWith(command: string): string | undefined {
	return /^(?:[A-Z_]+=\S+ )*bash (scripts\/[\w-]+\.sh)\b/.exec(command)?.[1];
}

describe('the npm scripts', () => {
	it.each(Object.entries(scripts))(
		'%s prepares the toolchain before it runs a tool',
		(_name, command) => {
			for (const step of stepsOf(command)) {
				if (/^npm run (-s )?[\w:-]+$/.test(step)) {
					expect(Object.keys(scripts)).toContain(step.replace(/^npm run (-s )?/, ''));
					continue;
				}
				const script = startsWith(step);
				expect({ step, script }).toEqual({ step, script: expect.any(String) });
				expect(readFileSync(join(root, script as string), 'utf8')).toMatch(
					/^source "\$\(dirname "\$\{BASH_SOURCE\[0\]\}"\)\/toolchain\.sh"\n(?:.*\n)*ensure_dependencies$/m,
				);
			}
		},
	);
});
