/**
 * The well-formedness check against libxml2's `xmllint --stream --noout` on the same catalogue,
 * side by side in one run on one machine. Prints one JSON line; see bench/README.md.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { writeCatalogue } from './catalogue';

type Check = typeof import('../nodes/shared/xml/check');

const megabytes = Number(process.env.BENCH_CHECK_MB ?? 1024);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const built = join(__dirname, '..', 'dist', 'nodes', 'shared', 'xml', 'check', 'index.js');

async function seconds(run: () => Promise<unknown> | unknown): Promise<number> {
	const start = process.hrtime.bigint();
	await run();
	return Number(process.hrtime.bigint() - start) / 1e9;
}

function xmllint(file: string): void {
	const result = spawnSync('xmllint', ['--stream', '--noout', '--nonet', file], {
		stdio: ['ignore', 'ignore', 'pipe'],
	});
	if (result.status !== 0)
		throw new Error(`xmllint refused the catalogue: ${result.stderr.toString().slice(0, 500)}`);
}

async function check(
	checkXmlStream: Check['checkXmlStream'],
	file: string,
	hash: boolean,
): Promise<void> {
	const sha256 = createHash('sha256');
	const problem = await checkXmlStream(
		createReadStream(file, { highWaterMark: 64 * 1024 }),
		hash ? (chunk) => sha256.update(chunk) : undefined,
	);
	if (problem) throw new Error(`the check refused the catalogue: ${problem.message}`);
}

async function main(): Promise<void> {
	if (spawnSync('xmllint', ['--version']).status !== 0) {
		throw new Error('xmllint is not installed (Debian: apt-get install libxml2-utils)');
	}
	// The package as n8n runs it: TypeScript compiled by tsc.
	if (!existsSync(built)) throw new Error('build the package first: npm run build');
	const { checkXmlStream } = (await import(built)) as Check;
	const folder = mkdtempSync(join(tmpdir(), 'xml-check-bench-'));
	try {
		const file = join(folder, 'catalogue.xml');
		const bytes = await writeCatalogue(file, megabytes * 2 ** 20);
		// Both read the file from the page cache: one read first.
		await check(checkXmlStream, file, false);
		const timings = {
			xmllint: [] as number[],
			check: [] as number[],
			checkAndHash: [] as number[],
		};
		for (let round = 0; round < rounds; round++) {
			timings.xmllint.push(await seconds(() => xmllint(file)));
			timings.check.push(await seconds(() => check(checkXmlStream, file, false)));
			timings.checkAndHash.push(await seconds(() => check(checkXmlStream, file, true)));
		}
		const best = (list: number[]) => Math.min(...list);
		const rate = (time: number) => Math.round(bytes / 2 ** 20 / time);
		console.log(
			JSON.stringify({
				bytes,
				rounds,
				xmllint_s: +best(timings.xmllint).toFixed(2),
				check_s: +best(timings.check).toFixed(2),
				check_and_sha256_s: +best(timings.checkAndHash).toFixed(2),
				xmllint_mb_s: rate(best(timings.xmllint)),
				check_mb_s: rate(best(timings.check)),
				check_and_sha256_mb_s: rate(best(timings.checkAndHash)),
				speed_vs_xmllint: +(best(timings.xmllint) / best(timings.check)).toFixed(2),
			}),
		);
	} finally {
		rmSync(folder, { recursive: true, force: true });
	}
}

main().catch((error: Error) => {
	console.error(error.message);
	process.exit(1);
});
