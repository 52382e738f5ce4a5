/*
 * How the transport reaches a host that is not the service, for the full edition: Node's own client,
 * the address judged in the connection's DNS lookup (../fullEdition/directExchange.ts). The verified
 * edition (n8n Cloud) is built with ./directExchange.verified.ts in its place: none, so the
 * transport goes through n8n's egress filter and request helper.
 */
export { exchangeDirectly } from '../fullEdition/directExchange';
