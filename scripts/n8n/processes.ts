/**
 * Child processes for the n8n driver: commands with a deadline and their whole process group ended
 * with them, and free ports on 127.0.0.1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type AddressInfo } from 'node:net';

export interface CommandResult {
	exitCode: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
}

export interface ProcessUser {
	uid: number;
	gid: number;
}

const COMMAND_TIMEOUT_MS = 5 * 60_000;

// Processes still running; if this process ends first, they go with it (whole process group: n8n
// starts a task runner of its own). The exit listener is there only while some are, as a test
// framework may load this module many times.
const running = new Set<ChildProcess>();

function killRunning(): void {
	for (const child of running) killGroup(child, 'SIGKILL');
}

export function track(child: ChildProcess): void {
	if (running.size === 0) process.on('exit', killRunning);
	running.add(child);
}

export function untrack(child: ChildProcess): void {
	if (running.delete(child) && running.size === 0) process.off('exit', killRunning);
}

/** Signals the process group the child leads (it was spawned `detached`). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		// The group is gone already.
	}
}

export function describeExit(result: Pick<CommandResult, 'exitCode' | 'signal'>): string {
	return result.signal ? `signal ${result.signal}` : `exit code ${result.exitCode}`;
}

/** Runs a command to its end in its own process group; a timeout ends the group. */
export function runCommand(
	command: string,
	args: string[],
	options: {
		cwd?: string;
		env?: NodeJS.ProcessEnv;
		timeoutMs?: number;
		echoStderr?: boolean;
		/** Another user to run it as (this process must be root), for a program that refuses root. */
		user?: ProcessUser;
	} = {},
): Promise<CommandResult> {
	const timeoutMs = options.timeoutMs ?? COMMAND_TIMEOUT_MS;
	return new Promise((resolvePromise, reject) => {
		const child = spawn(command, args, {
			cwd: options.cwd,
			env: options.env ?? process.env,
			uid: options.user?.uid,
			gid: options.user?.gid,
			detached: true,
			stdio: ['ignore', 'pipe', 'pipe'],
		});
		track(child);
		let stdout = '';
		let stderr = '';
		let timedOut = false;
		child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
			stdout += chunk;
		});
		child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
			stderr += chunk;
			if (options.echoStderr) process.stderr.write(chunk);
		});
		const timer = setTimeout(() => {
			timedOut = true;
			killGroup(child, 'SIGKILL');
		}, timeoutMs);
		child.on('error', (error) => {
			clearTimeout(timer);
			untrack(child);
			reject(error);
		});
		child.on('close', (exitCode, signal) => {
			clearTimeout(timer);
			untrack(child);
			killGroup(child, 'SIGKILL');
			if (timedOut) {
				reject(
					new Error(
						`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms\n${tail(stdout + stderr)}`,
					),
				);
				return;
			}
			resolvePromise({ exitCode, signal, stdout, stderr });
		});
	});
}

/** A TCP port on 127.0.0.1 that is free right now. */
export function freePort(): Promise<number> {
	return new Promise((resolvePromise, reject) => {
		const server = createServer();
		server.on('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as AddressInfo;
			server.close(() => resolvePromise(port));
		});
	});
}

/** Whether something accepts connections on a port of 127.0.0.1 right now. */
export function accepts(port: number): Promise<boolean> {
	return new Promise((resolvePromise) => {
		const socket = createConnection({ host: '127.0.0.1', port });
		socket.once('connect', () => {
			socket.destroy();
			resolvePromise(true);
		});
		socket.once('error', () => resolvePromise(false));
	});
}

/** The last lines of a command's output, enough to see why it failed. */
export function tail(text: string, lines = 40): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}

export function sleep(ms: number): Promise<void> {
	return new Promise((resolvePromise) => setTimeout(resolvePromise, ms));
}
