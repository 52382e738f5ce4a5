/**
 * The one rule for "this machine", where a password may travel unencrypted: localhost, 127.x.x.x
 * (also IPv4-mapped in IPv6) and ::1. It stands in the lowest layer because the transport and the
 * shared rate limit both apply it: the Base URL (plain http) and the Redis server of the shared
 * rate limit (Redis without TLS). It imports nothing.
 */

/**
 * Plain http to this machine, up to the end of the host. The nodes read it on the address as the
 * URL parser writes it; the credential's test, which cannot run node code, on the address as typed
 * (cleaned as the parser cleans it), so an unusual spelling of this machine (127.1) is only tested
 * over https there, never the other way round.
 */
export const LOOPBACK_HTTP =
	/^http:\/\/(localhost|127(\.\d{1,3}){3}|\[::1\]|\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\])(:\d+)?(\/|$)/i;

/**
 * Whether a host name or IP address given alone (IPv6 without brackets, as Redis clients take it)
 * is this machine: the URL parser writes it as it writes a Base URL's host (127.1, LOCALHOST and
 * ::ffff:127.0.0.1 included), and the Base URL's rule decides.
 */
export function isLoopbackHost(host: string): boolean {
	const address = `http://${host.includes(':') ? `[${host}]` : host}/`;
	if (!URL.canParse(address)) return false;
	const url = new URL(address);
	return (
		url.username === '' &&
		url.password === '' &&
		url.port === '' &&
		url.pathname === '/' &&
		LOOPBACK_HTTP.test(url.href)
	);
}
