/**
 * The one exception to https: plain http to this machine (localhost, 127.x.x.x, also IPv4-mapped
 * in IPv6, and ::1), up to the end of the host. The nodes read it on the address as the URL
 * parser writes it; the credential's test, which cannot run node code, on the address as typed
 * (cleaned as the parser cleans it), so an unusual spelling of this machine (127.1) is only tested
 * over https there, never the other way round.
 */
export const LOOPBACK_HTTP = /^http:\/\/(localhost|127(\.\d{1,3}){3}|\[::1\]|\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\])(:\d+)?(\/|$)/i;

/**
 * The one rule for the credential's base URL. The password travels with every request, so plain
 * http is refused except to this machine. Returns the URL without a trailing slash.
 */
export function checkBaseUrl(value: unknown): string {
	const text = typeof value === 'string' ? value.trim() : '';
	if (text === '') {
		throw new Error('The Base URL of the credential is empty');
	}
	const url = URL.canParse(text) ? new URL(text) : undefined;
	if (!url) {
		throw new Error('The Base URL of the credential is not a valid URL (e.g. https://integration.example.com)');
	}
	if (url.username !== '' || url.password !== '') {
		throw new Error('The Base URL of the credential must not contain a username or password: use the credential fields');
	}
	if (url.protocol === 'http:' && !LOOPBACK_HTTP.test(url.href)) {
		throw new Error(
			`The Base URL of the credential must start with https:// (plain http:// is only allowed for localhost, 127.0.0.1 and ::1), because the password would be sent unencrypted to ${url.hostname}`,
		);
	}
	if (url.protocol !== 'https:' && url.protocol !== 'http:') {
		throw new Error('The Base URL of the credential must start with https://');
	}
	if (url.search !== '' || url.hash !== '') {
		throw new Error('The Base URL of the credential must not contain a query (?) or fragment (#)');
	}
	return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}
