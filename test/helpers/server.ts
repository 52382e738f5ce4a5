import { once } from 'node:events';
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LocalServer {
	/** Base URL, e.g. `http://127.0.0.1:40123`. */
	url: string;
	close(): Promise<void>;
}

/** A bare HTTP server on a free port of 127.0.0.1, for answers the emulator does not give. */
export async function listenLocal(handler: RequestListener): Promise<LocalServer> {
	const server = createServer(handler);
	server.listen(0, '127.0.0.1');
	await once(server, 'listening');
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		close: async () => {
			server.closeAllConnections();
			server.close();
			await once(server, 'close');
		},
	};
}
