/**
 * Memory of a real n8n while it runs, for the benchmarks that drive one (memory-n8n.ts, sync-n8n.ts,
 * blocks-n8n.ts, pages-n8n.ts). A worker thread (its own event loop, so work on this process's main
 * thread, such as an emulator answering n8n, does not delay it) adds up VmRSS of the n8n process (or
 * processes: queue mode's main and workers) and everything they start (the task runner, short-lived
 * helpers) every 50 ms, and keeps each process's kernel high-water mark (VmHWM), which catches a spike
 * between two samples but counts from the process's start, and each process's highest VmRSS sampled,
 * which counts from the sampler's start (a night's peak in a process that lives many nights).
 */
import { Worker } from 'node:worker_threads';

const SAMPLE_MS = 50;

export interface ProcessPeak {
	pid: number;
	command: string;
	hwmKb: number;
	/** The highest VmRSS sampled. */
	rssPeakKb: number;
}

export interface Sampled {
	peakKb: number;
	samples: number;
	maxProcesses: number;
	processes: ProcessPeak[];
	mainPid?: number;
}

// Plain JavaScript, run as the worker's source: no loader involved.
const SAMPLER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readdirSync, readFileSync } = require('node:fs');
const { basename } = require('node:path');

function read(path) {
	try {
		return readFileSync(path, 'utf8');
	} catch {
		return null; // The process has just ended.
	}
}

function commandOf(pid) {
	const args = (read('/proc/' + pid + '/cmdline') || '').split('\\0').filter(Boolean);
	return args.map((arg) => (arg.startsWith('/') ? basename(arg) : arg)).join(' ');
}

// The n8n process (a child of this process whose command matches workerData.mainCommand), or the
// processes workerData.pids, and everything they started.
function n8nTree(root) {
	const children = new Map();
	for (const name of readdirSync('/proc')) {
		if (!/^\\d+$/.test(name)) continue;
		const stat = read('/proc/' + name + '/stat');
		if (stat === null) continue;
		// The command name in parentheses may hold spaces: the fields after it are plain.
		const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
		if (!children.has(ppid)) children.set(ppid, []);
		children.get(ppid).push(Number(name));
	}
	if (workerData.pids) return { main: undefined, pids: withDescendants(workerData.pids, children) };
	const mainCommand = new RegExp(workerData.mainCommand);
	const main = (children.get(root) || []).find((pid) => mainCommand.test(commandOf(pid) + ' '));
	if (main === undefined) return { main: undefined, pids: [] };
	return { main, pids: withDescendants([main], children) };
}

function withDescendants(roots, children) {
	const pids = [...roots];
	for (let index = 0; index < pids.length; index++) pids.push(...(children.get(pids[index]) || []));
	return pids;
}

const peaks = new Map();
let mainPid;
let peakKb = 0;
let samples = 0;
let maxProcesses = 0;

function sample() {
	const { main, pids } = n8nTree(workerData.rootPid);
	if (main !== undefined) mainPid = main;
	let totalKb = 0;
	let count = 0;
	for (const pid of pids) {
		const status = read('/proc/' + pid + '/status');
		const rss = status && /^VmRSS:\\s+(\\d+) kB$/m.exec(status);
		if (!rss) continue; // Gone, or a zombie.
		const rssKb = Number(rss[1]);
		totalKb += rssKb;
		count++;
		const hwmKb = Number((/^VmHWM:\\s+(\\d+) kB$/m.exec(status) || [0, 0])[1]);
		const known = peaks.get(pid);
		peaks.set(pid, {
			pid,
			command: commandOf(pid),
			hwmKb: Math.max(hwmKb, known ? known.hwmKb : 0),
			rssPeakKb: Math.max(rssKb, known ? known.rssPeakKb : 0),
		});
	}
	if (count === 0) return;
	samples++;
	peakKb = Math.max(peakKb, totalKb);
	maxProcesses = Math.max(maxProcesses, count);
}

const timer = setInterval(sample, workerData.intervalMs);
sample();
parentPort.once('message', () => {
	clearInterval(timer);
	sample();
	const processes = [...peaks.values()];
	parentPort.postMessage({ peakKb, samples, maxProcesses, processes, mainPid });
});
`;

/**
 * Samples the memory of n8n process trees until the returned function is called: the child of this
 * process whose command line matches `mainCommand` (e.g. `/ n8n execute /`), or the processes of
 * these pids, and their descendants.
 */
export function startSampler(processes: RegExp | number[]): () => Promise<Sampled> {
	const which =
		processes instanceof RegExp ? { mainCommand: processes.source } : { pids: processes };
	const worker = new Worker(SAMPLER_SOURCE, {
		eval: true,
		workerData: { rootPid: process.pid, intervalMs: SAMPLE_MS, ...which },
	});
	const result = new Promise<Sampled>((resolve, reject) => {
		worker.once('message', (message: Sampled) => resolve(message));
		worker.once('error', reject);
	});
	return async () => {
		worker.postMessage('stop');
		const sampled = await result;
		await worker.terminate();
		return sampled;
	};
}
