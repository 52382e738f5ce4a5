/**
 * Which proxy a URL goes through, read from the environment as n8n reads it: checked against
 * proxy-from-env, the module n8n itself uses, over the same settings and URLs.
 */
import { getProxyForUrl } from 'proxy-from-env';

import { proxyFor } from '../../nodes/shared/fullEdition/proxy';

const VARIABLES = [
	'http_proxy',
	'HTTP_PROXY',
	'https_proxy',
	'HTTPS_PROXY',
	'all_proxy',
	'ALL_PROXY',
	'no_proxy',
	'NO_PROXY',
	'npm_config_http_proxy',
	'npm_config_https_proxy',
	'npm_config_proxy',
	'npm_config_no_proxy',
];

const SETTINGS: Array<Record<string, string>> = [
	{},
	{ HTTP_PROXY: 'http://proxy.corp:3128' },
	{ http_proxy: 'http://lower:3128', HTTP_PROXY: 'http://upper:3128' },
	{ HTTPS_PROXY: 'proxy.corp:8443' },
	{ ALL_PROXY: 'http://all.corp:3128', HTTPS_PROXY: 'http://secure.corp:3128' },
	{ HTTP_PROXY: 'http://staff:s3cret@proxy.corp:3128', NO_PROXY: '*' },
	{
		HTTPS_PROXY: 'http://proxy.corp:3128',
		NO_PROXY: 'cdn.example.com, .shop.example,*.img.example',
	},
	{ HTTPS_PROXY: 'http://proxy.corp:3128', no_proxy: 'photos.example:8443 10.1.2.3' },
	{ HTTP_PROXY: 'http://proxy.corp:3128', NO_PROXY: 'PHOTOS.EXAMPLE' },
	{ npm_config_https_proxy: 'http://npm.corp:3128', HTTPS_PROXY: 'http://proxy.corp:3128' },
];

const URLS = [
	'http://photos.example/p/1.jpg',
	'https://photos.example/p/1.jpg',
	'https://photos.example:8443/p/1.jpg',
	'https://cdn.example.com/a.jpg',
	'https://a.cdn.example.com/a.jpg',
	'https://www.shop.example/a.jpg',
	'https://shop.example/a.jpg',
	'https://x.img.example/a.jpg',
	'http://10.1.2.3/a.jpg',
	'http://[2001:db8::1]:8080/a.jpg',
];

const saved = { ...process.env };
afterEach(() => {
	process.env = { ...saved };
});

describe.each(SETTINGS.map((setting) => [JSON.stringify(setting), setting]))(
	'with %s',
	(_name, setting) => {
		it.each(URLS)('%s goes where n8n sends it', (url) => {
			for (const name of VARIABLES) delete process.env[name];
			Object.assign(process.env, setting);
			const theirs = getProxyForUrl(url);
			expect(proxyFor(new URL(url))?.url.href).toBe(theirs ? new URL(theirs).href : undefined);
		});
	},
);

test('a proxy that is not a URL is named by its variable', () => {
	process.env.HTTPS_PROXY = 'http://[broken';
	expect(() => proxyFor(new URL('https://photos.example/a.jpg'))).toThrow(/HTTPS_PROXY/);
});
