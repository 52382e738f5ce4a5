// The verified edition, for n8n Cloud: the same source as the full edition without the full
// edition's adapters (nodes/shared/fullEdition/: the bucket and the known images in Redis, the
// multipart body streamed with form-data, which n8n's rules for verified packages forbid), with each
// edition module `<name>.ts` (nodes/edition/edition.ts and credentials/edition.ts) replaced by its
// twin `<name>.verified.ts`, and only what the package's entry points reach.
//
// Its package lives in verified/: package.json, eslint.config.mjs, nodes/, credentials/ and icons/
// are generated there and committed, because n8n's scanner lints the source of a published package
// at the commit its npm provenance names, in the folder whose package.json carries the package's
// name. dist/, README.md and LICENSE are built there and not committed.
//
//   node scripts/verified.mjs build          regenerate verified/ from the source and compile it
//   node scripts/verified.mjs pack [folder]  build, then `npm pack` it into the folder (default: the
//                                            project's); the tarball's path is the last line
//   node scripts/verified.mjs check          fail when verified/ is not what the source generates
//
// The full edition's build (`npm run build`, tsconfig.json, gulpfile.js) is left as it is.
import { execFileSync } from 'node:child_process';
import {
	copyFileSync,
	cpSync,
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ts = createRequire(import.meta.url)('typescript');

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const VERIFIED_PACKAGE = join(ROOT, 'verified');
const GENERATED = ['package.json', 'eslint.config.mjs', 'nodes', 'credentials', 'icons'];
// n8n's node tooling (`n8n-node lint`, `n8n-node cloud-support`) wants this file exactly: its
// configuration for packages that n8n Cloud may verify, unchanged.
const CLOUD_ESLINT_CONFIG =
	"import { config } from '@n8n/node-cli/eslint';\n\nexport default config;\n";
const SUFFIX = '.verified.ts';
/** The full edition's own code: the verified edition is built from the tree without it. */
export const FULL_EDITION_ONLY = 'nodes/shared/fullEdition';

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
export const VERIFIED_NAME = `${manifest.name}-verified`;

function filesUnder(folder) {
	if (!existsSync(folder)) return [];
	return readdirSync(folder, { withFileTypes: true, recursive: true })
		.filter((entry) => entry.isFile())
		.map((entry) => join(entry.parentPath, entry.name));
}

/**
 * The source tree in `folder` without the full edition's own folder and with the edition modules
 * swapped; fails on a twin without its full module. A verified module that still imports from that
 * folder then fails to compile.
 */
function stageSource(folder) {
	for (const name of GENERATED) rmSync(join(folder, name), { recursive: true, force: true });
	const fullEditionOnly = join(ROOT, FULL_EDITION_ONLY);
	for (const name of ['nodes', 'credentials', 'icons']) {
		cpSync(join(ROOT, name), join(folder, name), {
			recursive: true,
			filter: (source) => source !== fullEditionOnly,
		});
	}
	for (const twin of filesUnder(folder).filter((file) => file.endsWith(SUFFIX))) {
		const full = `${twin.slice(0, -SUFFIX.length)}.ts`;
		if (!existsSync(full))
			throw new Error(
				`${relative(folder, twin)} has no full-edition module ${relative(folder, full)} to replace`,
			);
		renameSync(twin, full);
	}
	// A node's codex names its node type, which n8n prefixes with the package's name.
	for (const codex of filesUnder(folder).filter((file) => file.endsWith('.node.json'))) {
		const data = JSON.parse(readFileSync(codex, 'utf8'));
		data.node = data.node.replace(`${manifest.name}.`, `${VERIFIED_NAME}.`);
		writeFileSync(codex, `${JSON.stringify(data, null, '\t')}\n`);
	}
}

/** The entry points n8n loads (package.json's n8n section), as source files of the staged tree. */
function entryPoints(folder) {
	return [...manifest.n8n.nodes, ...manifest.n8n.credentials].map((entry) =>
		join(folder, entry.replace(/^dist\//, '').replace(/\.js$/, '.ts')),
	);
}

/** Compiles what the entry points reach into `folder`/dist, and keeps only that of the staged source. */
function compile(folder) {
	const configFile = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
	const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
	const outDir = join(folder, 'dist');
	rmSync(outDir, { recursive: true, force: true });
	const program = ts.createProgram(entryPoints(folder), { ...options, rootDir: folder, outDir });
	const diagnostics = [...ts.getPreEmitDiagnostics(program), ...program.emit().diagnostics];
	if (diagnostics.length > 0) {
		const host = {
			getCanonicalFileName: (name) => name,
			getCurrentDirectory: () => ROOT,
			getNewLine: () => '\n',
		};
		throw new Error(
			`The verified edition does not compile:\n${ts.formatDiagnostics(diagnostics, host)}`,
		);
	}
	const reached = new Set(program.getSourceFiles().map((file) => resolve(file.fileName)));
	for (const file of ['nodes', 'credentials'].flatMap((name) => filesUnder(join(folder, name)))) {
		const codexOf = file.endsWith('.node.json') && `${file.slice(0, -'.json'.length)}.ts`;
		if (codexOf && reached.has(codexOf)) {
			const target = join(outDir, relative(folder, file));
			mkdirSync(dirname(target), { recursive: true });
			copyFileSync(file, target);
		} else if (!reached.has(file)) {
			rmSync(file);
		}
	}
}

/** package.json of the verified edition: the full edition's, without dependencies or development fields. */
function packageManifest() {
	const {
		description,
		keywords,
		license,
		author,
		homepage,
		repository,
		engines,
		files,
		peerDependencies,
		version,
		n8n,
	} = manifest;
	return {
		name: VERIFIED_NAME,
		version,
		description: `${description} The edition for n8n Cloud: no runtime dependencies, the rate limit metered in each n8n process.`,
		keywords,
		license,
		author,
		homepage,
		// npm checks a provenance statement against the repository; the package's source is this folder.
		repository: { ...repository, directory: 'verified' },
		engines,
		// The examples name the full edition's node and credential types: they stay in its package.
		files: files.filter((entry) => entry !== 'examples'),
		n8n: { ...n8n, strict: true },
		peerDependencies,
	};
}

/** Generates the verified package's source in `folder` and compiles it into `folder`/dist. */
function generate(folder) {
	stageSource(folder);
	writeFileSync(join(folder, 'package.json'), `${JSON.stringify(packageManifest(), null, 2)}\n`);
	writeFileSync(join(folder, 'eslint.config.mjs'), CLOUD_ESLINT_CONFIG);
	compile(folder);
}

export function build() {
	generate(VERIFIED_PACKAGE);
	// As gulpfile.js's build:icons: the nodes point at their icons relative to their built files.
	for (const icon of filesUnder(join(VERIFIED_PACKAGE, 'icons')).filter((file) =>
		file.endsWith('.svg'),
	)) {
		cpSync(
			icon,
			join(VERIFIED_PACKAGE, 'dist', 'icons', relative(join(VERIFIED_PACKAGE, 'icons'), icon)),
		);
	}
	for (const file of ['README.md', 'LICENSE'])
		copyFileSync(join(ROOT, file), join(VERIFIED_PACKAGE, file));
}

/** The generated files of verified/ that differ from what the source generates now, by path. */
export function staleFiles() {
	// Inside the project, so that the compiler finds the project's dependencies.
	const fresh = join(ROOT, 'build', 'verified-check');
	rmSync(fresh, { recursive: true, force: true });
	mkdirSync(fresh, { recursive: true });
	try {
		generate(fresh);
		const listed = (folder) =>
			GENERATED.flatMap((name) =>
				name.includes('.') ? [join(folder, name)] : filesUnder(join(folder, name)),
			).map((file) => relative(folder, file));
		const paths = [...new Set([...listed(fresh), ...listed(VERIFIED_PACKAGE)])].sort();
		const read = (folder, path) =>
			existsSync(join(folder, path)) ? readFileSync(join(folder, path), 'utf8') : undefined;
		return paths.filter((path) => read(fresh, path) !== read(VERIFIED_PACKAGE, path));
	} finally {
		rmSync(fresh, { recursive: true, force: true });
	}
}

/** Packs the built edition into `destination`; the tarball's path. */
export function pack(destination) {
	const output = execFileSync(
		'npm',
		['pack', VERIFIED_PACKAGE, '--ignore-scripts', '--silent', '--pack-destination', destination],
		{
			cwd: ROOT,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'inherit'],
		},
	);
	return join(destination, output.trim().split('\n').pop());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	const command = process.argv[2];
	if (command === 'check') {
		const stale = staleFiles();
		for (const path of stale) console.error(`verified/${path} is not what the source generates`);
		if (stale.length > 0) {
			console.error(
				'Run `npm run build:verified` and add verified/ to the release commit (git add -f verified).',
			);
			process.exit(1);
		}
		console.log('verified/ is what the source generates');
	} else if (command === 'build' || command === 'pack') {
		build();
		console.log(
			command === 'pack'
				? pack(resolve(process.argv[3] ?? ROOT))
				: `verified edition built in ${relative(ROOT, VERIFIED_PACKAGE)}`,
		);
	} else {
		console.error('usage: node scripts/verified.mjs build|pack|check');
		process.exit(2);
	}
}
