/**
 * The house rules that reviews kept finding slipped within days, made a test as the layers are
 * (layers.test.ts, which also holds the rule on entering a folder through its index.ts): short
 * files and functions, a README a new user reads to the end, and docs that name only what exists.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as ts from 'typescript';

const root = resolve(__dirname, '../..');

function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
	return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return filesUnder(path, keep);
		return keep(entry.name) ? [path] : [];
	});
}

function foldersUnder(dir: string): string[] {
	return readdirSync(join(root, dir), { withFileTypes: true })
		.filter((entry) => entry.isDirectory())
		.flatMap((entry) => [join(dir, entry.name), ...foldersUnder(join(dir, entry.name))]);
}

const lines = (file: string): number =>
	readFileSync(join(root, file), 'utf8').replace(/\n$/, '').split('\n').length;

const isSource = (name: string): boolean => name.endsWith('.ts');
const sources = [...filesUnder('nodes', isSource), ...filesUnder('credentials', isSource)];

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 80;
const MAX_README_LINES = 250;

/** The functions longer than the rule allows, each for its reason. */
const LONG_FUNCTIONS = [
	// The Upload operations' editor fields: one declarative list, read top to bottom as the editor shows it.
	'nodes/ProductDataIntegration/actions/document/uploadFields.ts uploadFields',
	// The XML writer's one recursive step over an element: splitting it would pass its state around.
	'nodes/shared/xml/build.ts writeElement',
	// The well-formedness scanner's state machine, one case per construct, on the hot path of every check.
	'nodes/shared/xml/check/scanner.ts scan',
];

function nameOf(node: ts.SignatureDeclaration): string {
	if (node.name) return node.name.getText();
	const { parent } = node;
	if (
		(ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
		parent.name !== undefined
	)
		return parent.name.getText();
	return '(anonymous)';
}

/** Each function of `file` with its length in lines. */
function functionsOf(file: string): Array<{ name: string; lines: number }> {
	const source = ts.createSourceFile(
		file,
		readFileSync(join(root, file), 'utf8'),
		ts.ScriptTarget.Latest,
		true,
	);
	const found: Array<{ name: string; lines: number }> = [];
	const visit = (node: ts.Node): void => {
		if (ts.isFunctionLike(node) && 'body' in node && node.body) {
			const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
			const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
			found.push({ name: nameOf(node), lines: last - first + 1 });
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

describe('the house rules', () => {
	it(`keep every file of the package within ${MAX_FILE_LINES} lines`, () => {
		const long = sources
			.filter((file) => lines(file) > MAX_FILE_LINES)
			.map((file) => `${file}: ${lines(file)}`);
		expect(long).toEqual([]);
	});

	it(`keep functions within ${MAX_FUNCTION_LINES} lines, but the named few`, () => {
		const long = sources.flatMap((file) =>
			functionsOf(file)
				.filter((fn) => fn.lines > MAX_FUNCTION_LINES)
				.map((fn) => `${file} ${fn.name}`),
		);
		expect(long).toEqual(LONG_FUNCTIONS);
	});

	it('measure functions by their whole body', () => {
		// A measure that lost the bodies would make the rule above pass.
		const scanner = functionsOf('nodes/shared/xml/check/scanner.ts').find(
			(fn) => fn.name === 'scan',
		);
		expect(scanner?.lines).toBeGreaterThan(MAX_FUNCTION_LINES);
	});

	it(`keep the README within ${MAX_README_LINES} lines`, () => {
		expect(lines('README.md')).toBeLessThanOrEqual(MAX_README_LINES);
	});

	it('name in the docs only files and folders that exist', () => {
		const docs = [
			'README.md',
			'CONTRIBUTING.md',
			...filesUnder('docs', (name) => name.endsWith('.md')),
			...filesUnder('bench', (name) => name.endsWith('.md')),
			...filesUnder('nodes', (name) => name.endsWith('.md')),
			...filesUnder('scripts', (name) => name.endsWith('.md')),
		];
		const path =
			/(?<![\w./-])((?:nodes|credentials|test|scripts|bench|docs|examples|icons)\/[\w./-]*[\w/])/g;
		const missing = docs.flatMap((doc) =>
			[...readFileSync(join(root, doc), 'utf8').matchAll(path)]
				.map((match) => match[1].replace(/\/$/, ''))
				.filter((named) => !existsSync(join(root, named)))
				.map((named) => `${doc}: ${named}`),
		);
		expect(missing).toEqual([]);
	});

	it('name every example workflow where the examples are listed', () => {
		const examples = readdirSync(join(root, 'examples')).filter((name) => name.endsWith('.json'));
		expect(examples.length).toBeGreaterThan(0);
		const unnamed = ['docs/examples.md', 'CONTRIBUTING.md'].flatMap((doc) => {
			const text = readFileSync(join(root, doc), 'utf8');
			return examples
				.filter((name) => !text.includes(`\`${name}\``))
				.map((name) => `${doc}: ${name}`);
		});
		expect(unnamed).toEqual([]);
	});

	it("map in CONTRIBUTING every folder of the package's source", () => {
		const map = readFileSync(join(root, 'CONTRIBUTING.md'), 'utf8');
		const unnamed = [...foldersUnder('nodes'), 'credentials'].filter(
			(folder) => !map.includes(`${folder.split('/').pop()}/`),
		);
		expect(unnamed).toEqual([]);
	});
});
