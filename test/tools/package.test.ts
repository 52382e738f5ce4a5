import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative } from 'node:path';

import type { ICredentialType, INodeType } from 'n8n-workflow';

import { packPackage } from '../../scripts/n8n/instance';

const ROOT = join(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
	n8n: { nodes: string[]; credentials: string[] };
};

/**
 * What n8n loads from the package (the built code, the nodes' codex files and the icons), and what
 * its users read: the README, the LICENSE and the example workflows.
 */
const NEEDED = [
	/^package\.json$/,
	/^README\.md$/,
	/^LICENSE$/,
	/^dist\/.+\.js$/,
	/^dist\/.+\.node\.json$/,
	/^dist\/icons\/[^/]+\.svg$/,
	/^examples\/.+\.json$/,
];

/** Every file of examples/, as a path in the package. */
function exampleFiles(): string[] {
	return readdirSync(join(ROOT, 'examples'), { recursive: true, withFileTypes: true })
		.filter((entry) => entry.isFile())
		.map((entry) =>
			posix.join('examples', relative(join(ROOT, 'examples'), join(entry.parentPath, entry.name))),
		)
		.sort();
}

/**
 * The paths in the package as it is published: the tarball E2E_PACKAGE_TGZ names (`npm test` packs
 * once for every step), or the package built and packed here.
 */
function packedFiles(): string[] {
	const folder = mkdtempSync(join(tmpdir(), 'package-test-'));
	try {
		const tarball = process.env.E2E_PACKAGE_TGZ || packPackage(folder);
		return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' })
			.split('\n')
			.filter((line) => line !== '')
			.map((line) => line.replace(/^package\//, ''))
			.sort();
	} finally {
		rmSync(folder, { recursive: true, force: true });
	}
}

function iconPaths(icon: unknown): string[] {
	if (typeof icon === 'string') return [icon];
	if (icon && typeof icon === 'object')
		return Object.values(icon).filter((value): value is string => typeof value === 'string');
	return [];
}

describe('the published package', () => {
	let files: string[];

	beforeAll(() => {
		files = packedFiles();
	}, 180_000);

	it('holds every file of examples/, where the README says they are once installed', () => {
		const examples = exampleFiles();
		expect(examples.length).toBeGreaterThan(0);
		expect(examples.filter((file) => !files.includes(file))).toEqual([]);
		const { name } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
			name: string;
		};
		expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain(
			`~/.n8n/nodes/node_modules/${name}/examples/`,
		);
	});

	it('holds only what n8n loads, the README, the LICENSE and the examples', () => {
		expect(files.filter((file) => !NEEDED.some((pattern) => pattern.test(file)))).toEqual([]);
		expect(files).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
	});

	it('holds every node and credential package.json names, and the icons they point at', async () => {
		const entries = [...manifest.n8n.nodes, ...manifest.n8n.credentials];
		expect(entries.filter((entry) => !files.includes(entry))).toEqual([]);

		for (const entry of entries) {
			const exports = (await import(join(ROOT, entry))) as Record<
				string,
				new () => INodeType | ICredentialType
			>;
			const instance = new (Object.values(exports)[0])();
			const icon = 'description' in instance ? instance.description.icon : instance.icon;
			const paths = iconPaths(icon);
			expect(paths.length).toBeGreaterThan(0);
			for (const path of paths) {
				expect(path.startsWith('file:')).toBe(true);
				expect(files).toContain(
					posix.normalize(posix.join(dirname(entry), path.slice('file:'.length))),
				);
			}
		}
	});
});
