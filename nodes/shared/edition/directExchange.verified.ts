/*
 * How the transport reaches a host that is not the service, for the verified edition (n8n Cloud),
 * built in place of ./directExchange.ts: n8n's rules allow no Node client of a package's own, so
 * there is none, and the transport goes through n8n's egress filter and request helper
 * (../transport/elsewhere.ts).
 */
// Typed as a client that is never there, so that the transport compiles alike in both editions.
export const exchangeDirectly: ((request: object) => Promise<never>) | undefined = undefined;
