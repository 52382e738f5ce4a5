/**
 * `npm start`, the demo, as a user runs it: from the command to a logged-in editor with the
 * emulator credential and the examples, then Ctrl-C; and a second start on the same demo folder.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { request } from 'undici';

import { EMULATOR_CREDENTIAL, freePort, PROJECT_ROOT } from './harness';
import { tail } from '../../scripts/n8n/processes';

const READY_LINE = 'Press Ctrl-C to stop.';

interface Demo {
	child: ChildProcess;
	output: () => string;
	exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startDemo(env: NodeJS.ProcessEnv): Demo {
	// Its own process group, like a terminal's foreground job: Ctrl-C goes to the whole group.
	const child = spawn('npm', ['start'], {
		cwd: PROJECT_ROOT,
		env,
		detached: true,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	let output = '';
	child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
	child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
	const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
		child.once('exit', (code, signal) => resolve({ code, signal })),
	);
	return { child, output: () => output, exited };
}

function signal(demo: Demo, name: NodeJS.Signals, { group }: { group: boolean }): void {
	const { pid } = demo.child;
	if (pid === undefined) throw new Error('npm start has no process id');
	process.kill(group ? -pid : pid, name);
}

async function untilReady(demo: Demo): Promise<void> {
	let exited = false;
	void demo.exited.then(() => (exited = true));
	while (!demo.output().includes(READY_LINE)) {
		if (exited) throw new Error(`npm start ended before n8n was ready:\n${tail(demo.output())}`);
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
}

function bannerValue(output: string, label: string): string {
	const match = new RegExp(`^\\s+${label}:\\s+(.+)$`, 'm').exec(output);
	if (!match) throw new Error(`No "${label}" in the banner:\n${tail(output)}`);
	return match[1];
}

function emulatorUrl(demo: Demo): string {
	const match = /(http:\/\/127\.0\.0\.1:\d+) \(production\)/.exec(
		bannerValue(demo.output(), 'emulator'),
	);
	if (!match) throw new Error(`No emulator URL in the banner:\n${tail(demo.output())}`);
	return match[1];
}

async function logIn(url: string, email: string, password: string): Promise<string> {
	const response = await request(`${url}/rest/login`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ emailOrLdapLoginId: email, password }),
	});
	await response.body.dump();
	expect(response.statusCode).toBe(200);
	const setCookie = response.headers['set-cookie'];
	const cookies = Array.isArray(setCookie) ? setCookie : [setCookie ?? ''];
	return (
		cookies
			.map((cookie) => cookie.split(';')[0])
			.find((cookie) => cookie.startsWith('n8n-auth=')) ?? ''
	);
}

async function getData<T>(url: string, path: string, cookie: string): Promise<T> {
	const response = await request(`${url}${path}`, { headers: { cookie } });
	const text = await response.body.text();
	expect(response.statusCode).toBe(200);
	return (JSON.parse(text) as { data: T }).data;
}

/** Waits (bounded) until nothing answers at `url` any more; false if something still does. */
async function untilClosed(url: string): Promise<boolean> {
	for (let attempt = 0; attempt < 120; attempt++) {
		if (!(await answers(url))) return true;
		await new Promise((resolve) => setTimeout(resolve, 500));
	}
	return false;
}

async function answers(url: string): Promise<boolean> {
	try {
		const response = await request(`${url}/healthz`);
		await response.body.dump();
		return true;
	} catch {
		return false;
	}
}

describe('npm start', () => {
	let demoFolder: string;
	let env: NodeJS.ProcessEnv;
	const running: Demo[] = [];

	beforeAll(async () => {
		demoFolder = mkdtempSync(join(tmpdir(), 'pdi-demo-'));
		env = {
			...process.env,
			N8N_PORT: String(await freePort()),
			N8N_DEMO_FOLDER: demoFolder,
			EMULATOR_PORT: '0',
		};
	});

	afterAll(async () => {
		for (const demo of running) {
			if (demo.child.exitCode === null && demo.child.signalCode === null) {
				signal(demo, 'SIGTERM', { group: true });
				await demo.exited;
			}
		}
		rmSync(demoFolder, { recursive: true, force: true });
	});

	test('serves the editor with the emulator credential and the examples until Ctrl-C', async () => {
		const demo = startDemo(env);
		running.push(demo);
		await untilReady(demo);

		const url = bannerValue(demo.output(), 'editor');
		expect(url).toBe(`http://127.0.0.1:${env.N8N_PORT}`);
		const [email, password] = bannerValue(demo.output(), 'login').split(' / ');
		const cookie = await logIn(url, email, password);
		const credentials = await getData<Array<{ id: string; name: string }>>(
			url,
			'/rest/credentials',
			cookie,
		);
		expect(credentials).toEqual([expect.objectContaining(EMULATOR_CREDENTIAL)]);
		const workflows = await getData<Array<{ id: string; active: boolean }>>(
			url,
			'/rest/workflows',
			cookie,
		);
		const examples = readdirSync(join(PROJECT_ROOT, 'examples'))
			.filter((file) => file.endsWith('.json'))
			.map((file) => ({
				file,
				...(JSON.parse(readFileSync(join(PROJECT_ROOT, 'examples', file), 'utf8')) as {
					id: string;
					active?: boolean;
				}),
			}));
		expect(workflows).toHaveLength(examples.length);
		// Those marked active are published in n8n (the nightly sync's page workflow, which its
		// schedule calls), the others not.
		const published = examples.filter((example) => example.active === true);
		expect(published.map((example) => example.file)).toContain('nightly-sync-page.json');
		expect(
			workflows
				.filter((workflow) => workflow.active)
				.map((workflow) => workflow.id)
				.sort(),
		).toEqual(published.map((example) => example.id).sort());
		expect(bannerValue(demo.output(), 'workflows')).toBe(
			`${examples.length} example(s) from examples/, ${published.length} of them published`,
		);
		expect(await answers(emulatorUrl(demo))).toBe(true);

		signal(demo, 'SIGINT', { group: true });
		await demo.exited;

		expect(await untilClosed(url)).toBe(true);
		expect(await untilClosed(emulatorUrl(demo))).toBe(true);
		expect(demo.output()).toContain('Stopping n8n');
	});

	test('starts again on the same demo folder, keeping its owner', async () => {
		const demo = startDemo(env);
		running.push(demo);
		await untilReady(demo);

		const url = bannerValue(demo.output(), 'editor');
		const login = bannerValue(demo.output(), 'login');
		expect(login).toContain('the owner of an earlier start');
		const [email, password] = login.split(' (')[0].split(' / ');
		const cookie = await logIn(url, email, password);
		const credentials = await getData<Array<{ id: string }>>(url, '/rest/credentials', cookie);
		expect(credentials.map((credential) => credential.id)).toEqual([EMULATOR_CREDENTIAL.id]);

		// As a process manager stops it: npm alone is told, n8n and the emulator go all the same.
		signal(demo, 'SIGTERM', { group: false });
		await demo.exited;

		expect(await untilClosed(url)).toBe(true);
		expect(await untilClosed(emulatorUrl(demo))).toBe(true);
	});
});
