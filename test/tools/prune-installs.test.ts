import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(__dirname, '../../scripts/prune-installs.sh');
const DAY_S = 24 * 60 * 60;

describe('removing n8n installs the cache no longer needs', () => {
	let cache: string;
	beforeEach(() => {
		cache = mkdtempSync(join(tmpdir(), 'pdi-cache-'));
	});
	afterEach(() => rmSync(cache, { recursive: true, force: true }));

	/** An install folder; `lastUsedDaysAgo` dates its marker (a finished install) or the folder itself (unfinished). */
	function install(
		name: string,
		{ finished, lastUsedDaysAgo }: { finished: boolean; lastUsedDaysAgo: number },
	): string {
		const folder = join(cache, name);
		mkdirSync(join(folder, 'node_modules'), { recursive: true });
		const when = Date.now() / 1000 - lastUsedDaysAgo * DAY_S;
		if (finished) {
			writeFileSync(join(folder, '.install-complete'), 'n8n\n');
			utimesSync(join(folder, '.install-complete'), when, when);
		}
		utimesSync(folder, when, when);
		return folder;
	}

	function prune(inUse: string): string {
		const run = spawnSync(
			'bash',
			['-c', 'source "$0" && prune_unused_installs "$1" "$2"', SCRIPT, cache, inUse],
			{
				encoding: 'utf8',
			},
		);
		expect(run.status).toBe(0);
		return run.stderr;
	}

	test('an install unused for over two weeks goes, a recently used one and the one in use stay', () => {
		const inUse = install('n8n-2.41.1-current', { finished: true, lastUsedDaysAgo: 100 });
		const recent = install('n8n-2.40.0-recent', { finished: true, lastUsedDaysAgo: 13 });
		const old = install('n8n-2.39.0-old', { finished: true, lastUsedDaysAgo: 15 });

		const log = prune(inUse);

		expect([existsSync(inUse), existsSync(recent), existsSync(old)]).toEqual([true, true, false]);
		expect(log).toContain(`unused for over 14 days: ${old}`);
	});

	test('an unfinished install goes after two days, unless an install into it holds its lock', () => {
		const inUse = install('n8n-2.41.1-current', { finished: true, lastUsedDaysAgo: 0 });
		const abandoned = install('n8n-2.40.0-abandoned', { finished: false, lastUsedDaysAgo: 2 });
		const fresh = install('n8n-2.40.1-fresh', { finished: false, lastUsedDaysAgo: 0 });
		const locked = install('n8n-2.39.0-locked', { finished: false, lastUsedDaysAgo: 2 });
		mkdirSync(`${locked}.lock.d`);

		prune(inUse);

		expect([
			existsSync(abandoned),
			existsSync(fresh),
			existsSync(locked),
			existsSync(`${locked}.lock.d`),
		]).toEqual([false, true, true, true]);
	});

	test('a cache without installs is left as it is', () => {
		expect(prune(join(cache, 'n8n-2.41.1-current'))).toBe('');
	});
});
