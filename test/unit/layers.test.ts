/**
 * The package's imports run one way. The two node files choose the edition (nodes/edition/, the
 * one module built with a twin in its place for the verified edition, with the credential's own)
 * and use their actions, which use nodes/shared, whose modules use the transport; below it lie the
 * ports (what the house needs from an edition, with the in-process defaults) and the throttle; the
 * XML code stands alone. The full edition's adapters (nodes/shared/fullEdition/) take only the
 * ports and the throttle, and only the edition reaches them. The throttle and the XML code import
 * nothing of n8n, so each can be read, tested and reused without it. No file imports itself back
 * through others.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

const root = resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
	return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
		const path = join(dir, entry.name);
		if (entry.isDirectory()) return sourceFiles(path);
		return entry.name.endsWith('.ts') ? [path] : [];
	});
}

/** What a file imports: package names as written, the project's own files as paths from the root. */
function importsOf(file: string): string[] {
	const text = readFileSync(join(root, file), 'utf8');
	return ts.preProcessFile(text, true, true).importedFiles.map(({ fileName }) => {
		if (!fileName.startsWith('.')) return fileName;
		const target = relative(root, resolve(root, dirname(file), fileName));
		return (
			sourceFiles(dirname(target)).find((candidate) => candidate === `${target}.ts`) ??
			`${target}/index.ts`
		);
	});
}

const files = [...sourceFiles('nodes'), ...sourceFiles('credentials')];
const graph = new Map(files.map((file) => [file, importsOf(file)]));

type Layer =
	| 'node'
	| 'edition'
	| 'shared'
	| 'fullEdition'
	| 'transport'
	| 'ports'
	| 'throttle'
	| 'xml';

/** The edition's value, built once at the top: the verified edition is built with its twin in its place. */
const EDITION = 'nodes/edition/';
/** The full edition's adapters: the verified edition is built from the tree without them (scripts/verified.mjs). */
const FULL_EDITION = 'nodes/shared/fullEdition/';

function layerOf(file: string): Layer {
	if (file.startsWith(EDITION)) return 'edition';
	if (file.startsWith(FULL_EDITION)) return 'fullEdition';
	if (file.startsWith('nodes/shared/transport/')) return 'transport';
	if (file.startsWith('nodes/shared/ports/')) return 'ports';
	if (file.startsWith('nodes/shared/throttle/')) return 'throttle';
	if (file.startsWith('nodes/shared/xml/')) return 'xml';
	if (file.startsWith('nodes/shared/')) return 'shared';
	return 'node';
}

/**
 * The layers each layer may import from (besides itself). The edition is imported by the two node
 * files alone and takes from the credential only its edition module (see below).
 */
const allowed: Record<Layer, Layer[]> = {
	node: ['edition', 'shared', 'transport', 'ports', 'throttle', 'xml'],
	edition: ['node', 'fullEdition', 'ports'],
	shared: ['transport', 'ports', 'throttle', 'xml'],
	fullEdition: ['ports', 'throttle'],
	transport: ['ports', 'throttle'],
	ports: ['throttle'],
	throttle: [],
	xml: [],
};

/** The project's files `file` imports. */
function projectImportsOf(file: string): string[] {
	return graph.get(file)!.filter((target) => graph.has(target));
}

/** A module built with its twin (`name.verified.ts`) in its place in the verified edition. */
function hasTwin(file: string): boolean {
	return !file.endsWith('.verified.ts') && graph.has(file.replace(/\.ts$/, '.verified.ts'));
}

/** The packages that n8n's rules for verified packages forbid and the full edition uses. */
const FULL_EDITION_PACKAGES = /^(ioredis|form-data|undici|(node:)?stream(\/.*)?)$/;

/** The imports that go past a folder's index.ts, each for its reason. */
const ENTERED_PAST_INDEX = [
	// The credential is loaded without n8n-workflow at hand, which the transport's index needs: it
	// reads the one module it needs (its numeric fields) directly.
	'credentials/ProductDataIntegrationApi.credentials.ts -> nodes/shared/transport/settings.ts',
];

/** The files the package's entry points reach; `read` names the file read for each (none: not followed). */
function reachedFromEntries(read: (file: string) => string | undefined): Set<string> {
	const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
		n8n: { nodes: string[]; credentials: string[] };
	};
	const reached = new Set<string>();
	const visit = (file: string): void => {
		if (reached.has(file)) return;
		reached.add(file);
		const source = read(file);
		if (source)
			for (const target of graph.get(source)!.filter((next) => graph.has(next))) visit(target);
	};
	for (const entry of [...manifest.n8n.nodes, ...manifest.n8n.credentials])
		visit(entry.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
	return reached;
}

/**
 * The top-level folder of a node, or the credential's folder (one credential, with the modules only
 * it uses): one never imports another's.
 */
function homeOf(file: string): string {
	return file.startsWith('credentials/') ? 'credentials' : file.split('/').slice(0, 2).join('/');
}

describe('imports', () => {
	it('follow the layers: nothing imports a layer above it', () => {
		const upward = files.flatMap((file) =>
			projectImportsOf(file)
				.filter(
					(target) =>
						layerOf(target) !== layerOf(file) && !allowed[layerOf(file)].includes(layerOf(target)),
				)
				.map((target) => `${file} -> ${target}`),
		);
		expect(upward).toEqual([]);
	});

	it('reach the edition only from the two node files, which choose it', () => {
		const importers = files.filter(
			(file) =>
				layerOf(file) !== 'edition' &&
				projectImportsOf(file).some((target) => layerOf(target) === 'edition'),
		);
		expect(importers).toEqual([
			'nodes/ProductDataIntegration/ProductDataIntegration.node.ts',
			'nodes/ProductDataIntegrationTrigger/ProductDataIntegrationTrigger.node.ts',
		]);
		// From the credential, the edition takes only what the credential declares of itself.
		const fromNodes = files
			.filter((file) => layerOf(file) === 'edition')
			.flatMap((file) =>
				projectImportsOf(file)
					.filter((target) => layerOf(target) === 'node')
					.filter((target) => !target.startsWith('credentials/edition'))
					.map((target) => `${file} -> ${target}`),
			);
		expect(fromNodes).toEqual([]);
	});

	it("reach the full edition's adapters only from the edition", () => {
		const outside = files
			.filter((file) => !['edition', 'fullEdition'].includes(layerOf(file)))
			.flatMap((file) =>
				projectImportsOf(file)
					.filter((target) => layerOf(target) === 'fullEdition')
					.map((target) => `${file} -> ${target}`),
			);
		expect(outside).toEqual([]);
		// The edition that does reach them: without it the check above would have nothing to refuse.
		expect(
			files.filter((file) =>
				projectImportsOf(file).some(
					(target) => layerOf(file) === 'edition' && layerOf(target) === 'fullEdition',
				),
			),
		).toEqual(['nodes/edition/edition.ts']);
	});

	it('keep the twins to the edition and the credential, each with its module', () => {
		const twins = files.filter((file) => file.endsWith('.verified.ts'));
		expect(twins).toEqual(['nodes/edition/edition.verified.ts', 'credentials/edition.verified.ts']);
		expect(twins.filter((twin) => !graph.has(twin.replace(/\.verified\.ts$/, '.ts')))).toEqual([]);
	});

	it("of ioredis, form-data, undici and stream lie in the full edition's adapters alone", () => {
		const importers = files.filter((file) =>
			graph.get(file)!.some((target) => FULL_EDITION_PACKAGES.test(target)),
		);
		expect(importers.filter((file) => layerOf(file) !== 'fullEdition')).toEqual([]);
		// The files that do import them: without them the check above would have nothing to refuse.
		expect(importers).toEqual([
			'nodes/shared/fullEdition/bucketStore.ts',
			'nodes/shared/fullEdition/proxy.ts',
			'nodes/shared/fullEdition/streamedMultipart.ts',
		]);
	});

	it('that only the full edition needs lie with the edition and its adapters', () => {
		const full = reachedFromEntries((file) => file);
		// As scripts/verified.mjs builds it: each twin in its module's place, no full edition's adapters.
		const verified = reachedFromEntries((file) => {
			if (layerOf(file) === 'fullEdition') return undefined;
			return hasTwin(file) ? file.replace(/\.ts$/, '.verified.ts') : file;
		});
		const fullOnly = [...full].filter((file) => !verified.has(file));
		// The credential's Redis fields stay with the credential: n8n's gate lints nodes/ by the rules
		// for node parameters, which refuse one of their option names.
		expect(fullOnly.filter((file) => layerOf(file) !== 'fullEdition' && !hasTwin(file))).toEqual([
			'credentials/rateLimitSharing.ts',
		]);
		// Without the full edition's adapters in the first place, the check above would see nothing.
		expect(fullOnly).toEqual(expect.arrayContaining(['nodes/shared/fullEdition/bucketStore.ts']));
	});

	it('enter a folder with an index.ts only through it', () => {
		const entered = [...new Set(files.filter((file) => file.endsWith('/index.ts')).map(dirname))];
		const past = files.flatMap((file) =>
			projectImportsOf(file)
				.filter((target) => !target.endsWith('/index.ts'))
				.filter((target) =>
					entered.some(
						(folder) => target.startsWith(`${folder}/`) && !file.startsWith(`${folder}/`),
					),
				)
				.map((target) => `${file} -> ${target}`),
		);
		expect(past).toEqual(ENTERED_PAST_INDEX);
	});

	it('between the nodes and the credential go only through nodes/shared', () => {
		const across = files
			.filter((file) => layerOf(file) === 'node')
			.flatMap((file) =>
				graph
					.get(file)!
					.filter(
						(target) =>
							graph.has(target) && layerOf(target) === 'node' && homeOf(target) !== homeOf(file),
					)
					.map((target) => `${file} -> ${target}`),
			);
		expect(across).toEqual([]);
	});

	it('leave n8n out of the throttle and the XML code', () => {
		const n8nImports = files
			.filter((file) => layerOf(file) === 'throttle' || layerOf(file) === 'xml')
			.flatMap((file) =>
				graph
					.get(file)!
					.filter((target) => /^n8n-|^@n8n\//.test(target))
					.map((target) => `${file} -> ${target}`),
			);
		expect(n8nImports).toEqual([]);
	});

	it('form no cycle', () => {
		const cycles: string[] = [];
		const state = new Map<string, 'open' | 'done'>();
		const visit = (file: string, path: string[]): void => {
			state.set(file, 'open');
			for (const target of graph.get(file)!.filter((next) => graph.has(next))) {
				if (state.get(target) === 'open')
					cycles.push([...path.slice(path.indexOf(target)), target].join(' -> '));
				else if (!state.has(target)) visit(target, [...path, target]);
			}
			state.set(file, 'done');
		};
		for (const file of files) if (!state.has(file)) visit(file, [file]);
		expect(cycles).toEqual([]);
	});

	it('are read from every file of the package', () => {
		// A resolver that lost the project's own files would make every check above pass.
		expect(graph.get('nodes/shared/transport/request.ts')).toContain(
			'nodes/shared/transport/http.ts',
		);
		expect(graph.get('nodes/shared/throttle/registry.ts')).toContain(
			'nodes/shared/throttle/gcra.ts',
		);
		expect(graph.get('nodes/shared/transport/index.ts')).toEqual(
			expect.arrayContaining(['nodes/shared/transport/request.ts']),
		);
		expect(graph.get('nodes/shared/fullEdition/sharedRegistry.ts')).toContain(
			'nodes/shared/fullEdition/bucketStore.ts',
		);
	});
});
