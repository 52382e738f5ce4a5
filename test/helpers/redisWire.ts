/**
 * Redis as a client sees it on the wire, for answers a real redis-server never gives: a server
 * that speaks just enough of the protocol for ioredis to connect and then answers the scripts as
 * the test says, and a proxy in front of a real server whose open connections can go silent.
 */
import { once } from 'node:events';
import {
	createConnection,
	createServer,
	type AddressInfo,
	type Server,
	type Socket,
} from 'node:net';

/** A reply: a string is a bulk string, a number an integer, null a null reply. */
export type Reply = string | number | null | Reply[] | { error: string };

function encode(reply: Reply): string {
	if (reply === null) return '$-1\r\n';
	if (typeof reply === 'number') return `:${reply}\r\n`;
	if (typeof reply === 'string') return `$${Buffer.byteLength(reply)}\r\n${reply}\r\n`;
	if (Array.isArray(reply)) return `*${reply.length}\r\n${reply.map(encode).join('')}`;
	return `-${reply.error}\r\n`;
}

/** The commands complete in `buffer` (arrays of bulk strings, as clients send them), and what is left. */
function parseCommands(buffer: string): { commands: string[][]; rest: string } {
	const commands: string[][] = [];
	let at = 0;
	for (;;) {
		const header = /^\*(\d+)\r\n/.exec(buffer.slice(at));
		if (!header) break;
		let cursor = at + header[0].length;
		const words: string[] = [];
		for (let index = 0; index < Number(header[1]); index++) {
			const length = /^\$(\d+)\r\n/.exec(buffer.slice(cursor));
			if (!length || buffer.length < cursor + length[0].length + Number(length[1]) + 2)
				return { commands, rest: buffer.slice(at) };
			cursor += length[0].length;
			words.push(buffer.slice(cursor, cursor + Number(length[1])));
			cursor += Number(length[1]) + 2;
		}
		commands.push(words);
		at = cursor;
	}
	return { commands, rest: buffer.slice(at) };
}

export interface WireServer {
	port: number;
	/** Connections accepted so far. */
	connections(): number;
	close(): Promise<void>;
}

async function listen(server: Server, sockets: Set<Socket>): Promise<WireServer> {
	let accepted = 0;
	server.on('connection', (socket) => {
		accepted++;
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	return {
		port: (server.address() as AddressInfo).port,
		connections: () => accepted,
		close: async () => {
			for (const socket of sockets) socket.destroy();
			server.close();
			await once(server, 'close');
		},
	};
}

/**
 * A Redis that accepts any login and database and answers the scripts (EVALSHA, EVAL) with
 * `script(command)`; undefined leaves the command unanswered, as a server that hangs does.
 */
export async function startScriptedRedis(
	script: (command: string[]) => Reply | undefined,
): Promise<WireServer> {
	const sockets = new Set<Socket>();
	const server = createServer((socket) => {
		let pending = '';
		socket.setEncoding('utf8').on('data', (chunk: string) => {
			const { commands, rest } = parseCommands(pending + chunk);
			pending = rest;
			for (const command of commands) {
				const name = command[0].toUpperCase();
				const reply =
					name === 'INFO'
						? '# Server\r\nloading:0\r\n'
						: name.startsWith('EVAL')
							? script(command)
							: 'OK';
				if (reply !== undefined) socket.write(encode(reply));
			}
		});
	});
	return await listen(server, sockets);
}

/** A server that takes connections and never answers anything, not even the login. */
export async function startMuteRedis(): Promise<WireServer> {
	return await listen(createServer(), new Set());
}

export interface SilencingProxy extends WireServer {
	/** The connections open now stop passing anything, without closing; new ones pass as before. */
	silenceOpenConnections(): void;
}

/** A TCP proxy to a Redis on this machine, as a NAT or firewall that may drop connections silently. */
export async function startSilencingProxy(targetPort: number): Promise<SilencingProxy> {
	const sockets = new Set<Socket>();
	const silencers: Array<() => void> = [];
	const server = createServer((client) => {
		const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
		sockets.add(upstream);
		let silent = false;
		client.on('data', (chunk) => silent || upstream.write(chunk));
		upstream.on('data', (chunk) => silent || client.write(chunk));
		client.on('close', () => upstream.destroy());
		upstream.on('close', () => client.destroy());
		client.on('error', () => upstream.destroy());
		upstream.on('error', () => client.destroy());
		silencers.push(() => {
			silent = true;
		});
	});
	const wire = await listen(server, sockets);
	return {
		...wire,
		silenceOpenConnections: () => {
			for (const silence of silencers.splice(0)) silence();
		},
	};
}
