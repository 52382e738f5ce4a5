/** proxy-from-env (n8n's own reading of the proxy variables) ships no types: the one function the tests compare with. */
declare module 'proxy-from-env' {
	export function getProxyForUrl(url: string): string;
}
