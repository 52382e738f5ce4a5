/**
 * Blocks of a real n8n process's event loop, for the benchmarks that drive one (blocks-n8n.ts,
 * pages-n8n.ts). A worker thread of this process (its own event loop: an emulator or a shop answering
 * n8n here does not delay it) asks the process's GET /healthz one request after another, 20 ms apart
 * (the main's, or a queue-mode worker's health server), and for each slow answer reads the processor
 * time of the process's main thread over it (/proc/<pid>/task/<pid>/stat). An answer is late either
 * because the event loop was blocked or because the shared machine gave the process no processor;
 * only the first costs its main thread processor time, so each late answer's block is counted as the
 * smaller of its delay and that time (clock-tick resolution, 10 ms on Linux). Linux only (/proc).
 */
import { Worker } from 'node:worker_threads';

import type { N8nServer } from '../scripts/n8n/server';

const PROBE_PAUSE_MS = 20;
/** An answer slower than this is looked into. */
const LATE_MS = 50;
/** The bound for one block of the event loop. */
export const BLOCK_TARGET_MS = 250;

export interface LateAnswer {
	/** When the request was sent (Date.now()). */
	startedAt: number;
	answerMs: number;
	mainThreadCpuMs: number;
}

export interface Probed {
	late: LateAnswer[];
	longestAnswerMs: number;
}

// Plain JavaScript, run as the worker's source: no loader involved.
const PROBE_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const http = require('node:http');
const TICK_MS = 1000 / 100; // USER_HZ: 100 on Linux
function cpuMs() {
	try {
		const stat = readFileSync('/proc/' + workerData.pid + '/task/' + workerData.pid + '/stat', 'utf8');
		const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
		return (Number(fields[11]) + Number(fields[12])) * TICK_MS; // utime, stime
	} catch {
		return 0;
	}
}
function ask() {
	return new Promise((resolve) => {
		const request = http.get(workerData.url, (response) => {
			response.resume();
			response.on('end', resolve);
		});
		request.on('error', resolve);
	});
}
let stopped = false;
const late = [];
let longestAnswerMs = 0;
parentPort.once('message', () => { stopped = true; });
(async () => {
	while (!stopped) {
		const startedAt = Date.now();
		const cpuBefore = cpuMs();
		const start = performance.now();
		await ask();
		const answerMs = performance.now() - start;
		longestAnswerMs = Math.max(longestAnswerMs, answerMs);
		if (answerMs > workerData.lateMs)
			late.push({ startedAt, answerMs: Math.round(answerMs), mainThreadCpuMs: Math.round(cpuMs() - cpuBefore) });
		await new Promise((resolve) => setTimeout(resolve, workerData.pauseMs));
	}
	parentPort.postMessage({ late, longestAnswerMs: Math.round(longestAnswerMs) });
})();
`;

/**
 * Probes the n8n process `server` (its /healthz, its pid) until the returned function is called,
 * which hands back the late answers.
 */
export function startProbe(server: N8nServer): () => Promise<Probed> {
	const pid = pidOf(server);
	const worker = new Worker(PROBE_SOURCE, {
		eval: true,
		workerData: { url: `${server.url}/healthz`, pid, pauseMs: PROBE_PAUSE_MS, lateMs: LATE_MS },
	});
	const result = new Promise<Probed>((resolve, reject) => {
		worker.once('message', resolve);
		worker.once('error', reject);
	});
	// A worker that fails before it is stopped is told when it is stopped, not as an unhandled rejection.
	result.catch(() => undefined);
	return async () => {
		worker.postMessage('stop');
		const probed = await result;
		await worker.terminate();
		return probed;
	};
}

/** The pid of the n8n process `server` (the driver's child). */
export function pidOf(server: N8nServer): number {
	if (server.pid === undefined) throw new Error('The n8n process has no pid');
	return server.pid;
}

/** How long the event loop was held for a late answer. */
export function blockOf(answer: LateAnswer): number {
	return Math.min(answer.answerMs, answer.mainThreadCpuMs);
}

export function longestBlock(answers: LateAnswer[]): number {
	return Math.max(0, ...answers.map(blockOf));
}

export function blocksOverTarget(answers: LateAnswer[]): number {
	return answers.filter((answer) => blockOf(answer) > BLOCK_TARGET_MS).length;
}
