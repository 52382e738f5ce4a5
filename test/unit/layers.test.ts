/**
 * The package's imports run one way: the nodes and the credential use nodes/shared, whose modules
 * use the transport, which uses the throttle; the XML code stands alone. The throttle and the XML
 * code import nothing of n8n, so each can be read, tested and reused without it. The full edition's
 * own code (nodes/shared/redis/) is reached only through edition modules, the ones the verified
 * edition replaces by their twins. No file imports itself back through others.
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

type Layer = 'node' | 'shared' | 'redis' | 'transport' | 'throttle' | 'xml';

function layerOf(file: string): Layer {
	if (file.startsWith('nodes/shared/transport/')) return 'transport';
	if (file.startsWith('nodes/shared/throttle/')) return 'throttle';
	if (file.startsWith('nodes/shared/xml/')) return 'xml';
	if (file.startsWith('nodes/shared/redis/')) return 'redis';
	if (file.startsWith('nodes/shared/')) return 'shared';
	return 'node';
}

/** The full edition's own folder: the verified edition is built from the tree without it (scripts/verified.mjs). */
const FULL_EDITION_ONLY = 'nodes/shared/redis/';

/** A module the verified edition replaces by its twin `<name>.verified.ts` beside it. */
function isEditionModule(file: string): boolean {
	return !file.endsWith('.verified.ts') && graph.has(file.replace(/\.ts$/, '.verified.ts'));
}

/** The layers each layer may import from (besides itself); the full edition's own folder: see isEditionModule. */
const allowed: Record<Layer, Layer[]> = {
	node: ['shared', 'transport', 'throttle', 'xml'],
	shared: ['transport', 'throttle', 'xml'],
	redis: ['shared', 'transport', 'throttle'],
	transport: ['throttle'],
	throttle: [],
	xml: [],
};

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
			graph
				.get(file)!
				.filter(
					(target) => graph.has(target) && !(layerOf(target) === 'redis' && isEditionModule(file)),
				)
				.filter(
					(target) =>
						layerOf(target) !== layerOf(file) && !allowed[layerOf(file)].includes(layerOf(target)),
				)
				.map((target) => `${file} -> ${target}`),
		);
		expect(upward).toEqual([]);
	});

	it("reach the full edition's own folder only from edition modules, which have a verified twin", () => {
		const outside = files
			.filter((file) => !file.startsWith(FULL_EDITION_ONLY) && !isEditionModule(file))
			.flatMap((file) =>
				graph
					.get(file)!
					.filter((target) => target.startsWith(FULL_EDITION_ONLY))
					.map((target) => `${file} -> ${target}`),
			);
		expect(outside).toEqual([]);
		// The edition modules that do reach it: without them the check above would have nothing to refuse.
		const through = files.filter(
			(file) =>
				isEditionModule(file) &&
				graph.get(file)!.some((target) => target.startsWith(FULL_EDITION_ONLY)),
		);
		expect(through).toEqual(
			expect.arrayContaining([
				'nodes/shared/transport/bucketHome.ts',
				'nodes/shared/knownImages/home.ts',
			]),
		);
	});

	it('enter the transport and the throttle only through their index.ts', () => {
		// The credential is loaded without n8n-workflow at hand, which the transport's index needs: it
		// reads the two modules it needs (the credential's names, its numeric fields) directly.
		const credentialReads = [
			'credentials/ProductDataIntegrationApi.credentials.ts -> nodes/shared/transport/edition.ts',
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
		expect(graph.get('nodes/shared/redis/sharedRegistry.ts')).toContain(
			'nodes/shared/redis/redisBucket.ts',
		);
	});
});
