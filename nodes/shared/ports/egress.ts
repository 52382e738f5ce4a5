import type { NodeEgressFilter } from 'n8n-workflow';

/*
 * A client of the edition's own for one GET to a host that is not the service (a photo host, an
 * error document's host), which judges the address where the connection chooses it (the full
 * edition: ../fullEdition/directExchange.ts). An edition without one leaves the exchange to n8n's
 * request helper (../transport/egressExchange.ts).
 */

/** A resolver as n8n's egress filter hands it out: Node's `lookup` signature. */
export type DirectLookup = ReturnType<NodeEgressFilter['createSecureLookup']>;

/** The host's answer: its status, headers as sent, and its body to be read as it arrives. */
export interface DirectAnswer {
	statusCode: number;
	headers: Record<string, string | string[] | undefined>;
	body: AsyncIterable<Buffer | string> & { destroy?: () => void };
}

export interface DirectRequest {
	url: URL;
	headers: Record<string, string>;
	signal: AbortSignal;
	/** Throws when a connection for this URL must not go to `address`. */
	admit(address: string): void;
	/**
	 * The error a connection fails with when the host name has no address, or the resolver
	 * refused it: worded as a refused internal address, so that neither tells the other apart.
	 */
	unresolved(error: Error): Error;
	/**
	 * The resolver to ask: n8n's own where the running n8n offers it (2.41 on, it also applies the
	 * instance's SSRF rules when N8N_SSRF_PROTECTION_ENABLED is on), Node's otherwise.
	 */
	resolver?: DirectLookup;
}

export type DirectExchange = (request: DirectRequest) => Promise<DirectAnswer>;
