/**
 * The package's imports run one way: the nodes and the credential use nodes/shared, whose modules
 * use the transport, which uses the throttle; the XML code stands alone. The throttle and the XML
 * code import nothing of n8n, so each can be read, tested and reused without it. The two editions
 * part in two folders: nodes/shared/edition/ holds every edition module with its twin (the verified
 * edition is built with the twins in their place), and nodes/shared/fullEdition/ the full edition's
 * own code, which only the edition modules reach. No file imports itself back through others.
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

type Layer = 'node' | 'shared' | 'edition' | 'fullEdition' | 'transport' | 'throttle' | 'xml';

/** The edition modules, each with its twin: the verified edition is built with the twins in their place. */
const EDITION = 'nodes/shared/edition/';
/** The full edition's own code: the verified edition is built from the tree without it (scripts/verified.mjs). */
const FULL_EDITION = 'nodes/shared/fullEdition/';

function layerOf(file: string): Layer {
	if (file.startsWith('nodes/shared/transport/')) return 'transport';
	if (file.startsWith('nodes/shared/throttle/')) return 'throttle';
	if (file.startsWith('nodes/shared/xml/')) return 'xml';
	if (file.startsWith(EDITION)) return 'edition';
	if (file.startsWith(FULL_EDITION)) return 'fullEdition';
	if (file.startsWith('nodes/shared/')) return 'shared';
	return 'node';
}

/**
 * The layers each layer may import from (besides itself). The edition modules have no place of
 * their own: they stand where their importers stand (see seenThroughEdition).
 */
const allowed: Record<Exclude<Layer, 'edition'>, Layer[]> = {
	node: ['shared', 'transport', 'throttle', 'xml'],
	shared: ['transport', 'throttle', 'xml'],
	fullEdition: ['shared', 'transport', 'throttle'],
	transport: ['throttle'],
	throttle: [],
	xml: [],
};

/**
 * The project's files `file` imports, an edition module replaced by what it imports besides the
 * full edition's own code: an edition module takes nothing its importer may not take itself.
 */
function seenThroughEdition(file: string): string[] {
	return graph
		.get(file)!
		.filter((target) => graph.has(target))
		.flatMap((target) =>
			layerOf(target) === 'edition'
				? graph.get(target)!.filter((next) => graph.has(next) && layerOf(next) !== 'fullEdition')
				: [target],
		);
}

/** The packages that n8n's rules for verified packages forbid and the full edition uses. */
const FULL_EDITION_PACKAGES = /^(ioredis|form-data|(node:)?stream(\/.*)?)$/;

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
		const upward = files
			.filter((file) => layerOf(file) !== 'edition')
			.flatMap((file) => {
				const layer = layerOf(file) as Exclude<Layer, 'edition'>;
				return seenThroughEdition(file)
					.filter(
						(target) => layerOf(target) !== layer && !allowed[layer].includes(layerOf(target)),
					)
					.map((target) => `${file} -> ${target}`);
			});
		expect(upward).toEqual([]);
	});

	it("reach the full edition's own folder only from the edition modules", () => {
		const outside = files
			.filter((file) => !['edition', 'fullEdition'].includes(layerOf(file)))
			.flatMap((file) =>
				graph
					.get(file)!
					.filter((target) => layerOf(target) === 'fullEdition')
					.map((target) => `${file} -> ${target}`),
			);
		expect(outside).toEqual([]);
		// The edition modules that do reach it: without them the check above would have nothing to refuse.
		const through = files.filter(
			(file) =>
				layerOf(file) === 'edition' &&
				graph.get(file)!.some((target) => layerOf(target) === 'fullEdition'),
		);
		expect(through).toEqual([
			'nodes/shared/edition/answerHome.ts',
			'nodes/shared/edition/bucketHome.ts',
			'nodes/shared/edition/directExchange.ts',
			'nodes/shared/edition/knownImagesHome.ts',
			'nodes/shared/edition/multipartBody.ts',
			'nodes/shared/edition/runLockHome.ts',
		]);
	});

	it('keep every edition module and its twin in one folder, and nothing else there', () => {
		const folders = new Set(
			files.filter((file) => file.endsWith('.verified.ts')).map((file) => dirname(file)),
		);
		expect([...folders]).toEqual(['nodes/shared/edition']);
		const unpaired = files
			.filter((file) => layerOf(file) === 'edition')
			.filter((file) =>
				file.endsWith('.verified.ts')
					? !graph.has(file.replace(/\.verified\.ts$/, '.ts'))
					: !graph.has(file.replace(/\.ts$/, '.verified.ts')),
			);
		expect(unpaired).toEqual([]);
	});

	it("of ioredis, form-data and stream lie in the full edition's own folder alone", () => {
		const importers = files.filter((file) =>
			graph.get(file)!.some((target) => FULL_EDITION_PACKAGES.test(target)),
		);
		expect(importers.filter((file) => layerOf(file) !== 'fullEdition')).toEqual([]);
		// The files that do import them: without them the check above would have nothing to refuse.
		expect(importers).toEqual([
			'nodes/shared/fullEdition/bucketStore.ts',
			'nodes/shared/fullEdition/streamedMultipart.ts',
		]);
	});

	it("that only the full edition needs lie in the two editions' folders", () => {
		const full = reachedFromEntries((file) => file);
		// As scripts/verified.mjs builds it: each edition module read from its twin, no full edition's own code.
		const verified = reachedFromEntries((file) => {
			if (layerOf(file) === 'fullEdition') return undefined;
			return layerOf(file) === 'edition' ? file.replace(/\.ts$/, '.verified.ts') : file;
		});
		const fullOnly = [...full].filter((file) => !verified.has(file));
		// The credential's Redis fields stay with the credential: n8n's gate lints nodes/ by the rules
		// for node parameters, which refuse one of their option names.
		expect(fullOnly.filter((file) => !['edition', 'fullEdition'].includes(layerOf(file)))).toEqual([
			'credentials/rateLimitSharing.ts',
		]);
		// Without the full edition's own code in the first place, the check above would see nothing.
		expect(fullOnly).toEqual(expect.arrayContaining(['nodes/shared/fullEdition/bucketStore.ts']));
	});

	it('enter the transport and the throttle only through their index.ts', () => {
		// The credential is loaded without n8n-workflow at hand, which the transport's index needs: it
		// reads the one module it needs (its numeric fields) directly.
		const credentialReads = [
			'credentials/ProductDataIntegrationApi.credentials.ts -> nodes/shared/transport/settings.ts',
		];
		const past = ['nodes/shared/transport/', 'nodes/shared/throttle/'].flatMap((folder) =>
			files
				.filter((file) => !file.startsWith(folder))
				.flatMap((file) =>
					graph
						.get(file)!
						.filter((target) => target.startsWith(folder) && target !== `${folder}index.ts`)
						.map((target) => `${file} -> ${target}`),
				),
		);
		expect(past).toEqual(credentialReads);
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
