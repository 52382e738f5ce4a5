import { LOOPBACK_HTTP } from '../throttle';

/**
 * The one rule for the credential's base URL. The password travels with every request, so plain
 * http is refused except to this machine (see LOOPBACK_HTTP). Returns the URL without a trailing slash.
 */
export function checkBaseUrl(value: unknown): string {
	const text = typeof value === 'string' ? value.trim() : '';
	if (text === '') {
		throw new Error('The Base URL of the credential is empty');
	}
	const url = URL.canParse(text) ? new URL(text) : undefined;
	if (!url) {
		throw new Error(
			'The Base URL of the credential is not a valid URL (e.g. https://integration.example.com)',
		);
	}
	if (url.username !== '' || url.password !== '') {
		throw new Error(
			'The Base URL of the credential must not contain a username or password: use the credential fields',
		);
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
