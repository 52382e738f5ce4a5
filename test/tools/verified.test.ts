import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import * as ts from 'typescript';

/**
 * The verified edition (scripts/verified.mjs) as n8n Cloud gets it. n8n's scanner rules run on it
 * in `npm run lint:community`; this checks the same ground from the other side: what its code
 * requires and which of Node's globals it touches, whatever the scanner's rules let through.
 */
const ROOT = join(__dirname, '..', '..');
const fullManifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
	name: string;
};

/** What a package for n8n Cloud may require: n8n-workflow (n8n's own copy) and Node's crypto. */
const ALLOWED_MODULES = new Set(['n8n-workflow', 'crypto', 'node:crypto']);
/** Node's globals the rules forbid: the environment, timers, the global object, file paths. */
const FORBIDDEN_GLOBALS = new Set([
	'process',
	'global',
	'globalThis',
	'__dirname',
	'__filename',
	'setTimeout',
	'setInterval',
	'setImmediate',
	'clearTimeout',
	'clearInterval',
	'clearImmediate',
]);

function filesUnder(folder: string): string[] {
	return readdirSync(folder, { withFileTypes: true, recursive: true })
		.filter((entry) => entry.isFile())
		.map((entry) => join(entry.parentPath, entry.name));
}

/** The modules a built file requires and the forbidden globals it names, as `file: what`. */
function forbiddenUses(folder: string, file: string): string[] {
	const source = ts.createSourceFile(
		file,
		readFileSync(file, 'utf8'),
		ts.ScriptTarget.ES2021,
		true,
		ts.ScriptKind.JS,
	);
	const found: string[] = [];
	const visit = (node: ts.Node): void => {
		if (
			ts.isCallExpression(node) &&
			ts.isIdentifier(node.expression) &&
			node.expression.text === 'require'
		) {
			const [argument] = node.arguments;
			const module = argument && ts.isStringLiteral(argument) ? argument.text : '(computed)';
			if (!module.startsWith('.') && !ALLOWED_MODULES.has(module))
				found.push(`${relative(folder, file)}: require ${module}`);
		} else if (ts.isIdentifier(node) && FORBIDDEN_GLOBALS.has(node.text)) {
			const parent = node.parent;
			const isMemberName =
				(ts.isPropertyAccessExpression(parent) && parent.name === node) ||
				(ts.isPropertyAssignment(parent) && parent.name === node);
			if (!isMemberName) found.push(`${relative(folder, file)}: ${node.text}`);
		}
		ts.forEachChild(node, visit);
	};
	visit(source);
	return found;
}

describe('the verified edition', () => {
	let folder: string;
	let manifest: {
		name: string;
		dependencies?: object;
		n8n: { strict?: boolean; nodes: string[]; credentials: string[] };
	};

	beforeAll(() => {
		folder = mkdtempSync(join(tmpdir(), 'verified-test-'));
		let tarball = process.env.E2E_VERIFIED_TGZ;
		if (!tarball) {
			const printed = execFileSync('node', [join(ROOT, 'scripts', 'verified.mjs'), 'pack'], {
				cwd: ROOT,
				encoding: 'utf8',
			});
			tarball = printed.trim().split('\n').pop() as string;
		}
		execFileSync('tar', ['-xzf', tarball, '--strip-components=1'], { cwd: folder });
		if (!process.env.E2E_VERIFIED_TGZ) rmSync(tarball);
		manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8'));
	}, 180_000);

	afterAll(() => rmSync(folder, { recursive: true, force: true }));

	it('is committed as the source generates it (n8n scans the committed source of what is published)', () => {
		expect(() =>
			execFileSync('node', [join(ROOT, 'scripts', 'verified.mjs'), 'check'], {
				cwd: ROOT,
				stdio: 'pipe',
			}),
		).not.toThrow();
	}, 180_000);

	it('requires nothing but n8n-workflow and crypto, and touches none of the forbidden globals', () => {
		const built = filesUnder(join(folder, 'dist')).filter((file) => file.endsWith('.js'));
		expect(built.length).toBeGreaterThan(0);
		expect(built.flatMap((file) => forbiddenUses(folder, file))).toEqual([]);
	});

	it("holds nothing of the full edition's own folder, and no twin under its own name", () => {
		const names = filesUnder(join(folder, 'dist')).map((file) => relative(folder, file));
		// The folder is there to be left out: an empty or renamed one would make this pass unseen.
		expect(
			readdirSync(join(ROOT, 'nodes', 'shared', 'fullEdition')).filter((name) =>
				name.endsWith('.ts'),
			).length,
		).toBeGreaterThan(0);
		expect(
			names.filter(
				(name) => name.startsWith('dist/nodes/shared/fullEdition/') || /\.verified\./.test(name),
			),
		).toEqual([]);
		// Its twins are in it, in their full-edition modules' place.
		expect(names).toEqual(
			expect.arrayContaining([
				'dist/nodes/edition/edition.js',
				'dist/credentials/edition.js',
				'dist/nodes/shared/ports/inMemoryMultipart.js',
			]),
		);
	});

	it("has its own package name, no runtime dependency, and n8n's strict mode", () => {
		expect(manifest.name).toBe(`${fullManifest.name}-verified`);
		expect(manifest.dependencies).toBeUndefined();
		expect(manifest.n8n.strict).toBe(true);
	});

	it("names its node types after its package and its credential type apart from the full edition's", async () => {
		for (const entry of manifest.n8n.nodes) {
			const codex = JSON.parse(
				readFileSync(join(folder, entry.replace(/\.js$/, '.json')), 'utf8'),
			) as { node: string };
			expect(codex.node.startsWith(`${manifest.name}.`)).toBe(true);
		}
		const [credentialFile] = manifest.n8n.credentials;
		const exports = (await import(join(folder, credentialFile))) as Record<
			string,
			new () => { name: string; properties: Array<{ name: string }> }
		>;
		const credential = new (Object.values(exports)[0])();
		expect(credential.name).toBe('productDataIntegrationVerifiedApi');
		expect(credential.properties.map((property) => property.name)).not.toContain(
			'rateLimitSharing',
		);
	});
});
