import { createHash, randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

import type { INodeExecutionData, INodeParameters } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { runNode } from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { listenLocal, type LocalServer } from '../helpers/server';

jest.setTimeout(60_000);

const node = new ProductDataIntegration();
const { emulator, credentials } = useEmulator(FAST_BUCKET);

function md5(data: Buffer): string {
	return createHash('md5').update(data).digest('hex');
}

function jpeg(size = 2000): Buffer {
	return Buffer.concat([Buffer.from('ffd8ffe0', 'hex'), randomBytes(size)]);
}

/** A photo host: photos by path, with an ETag; counts what it sends and keeps the request headers. */
const photos = new Map<string, Buffer>();
/** An ETag other than the photo's quoted MD5, by path. */
const etags = new Map<string, string>();
const received: IncomingHttpHeaders[] = [];
/** Where the host redirects, by path, given its own URL. */
const redirects = new Map<string, (own: string) => string>([
	['/r/same', () => '/p/0.jpg'],
	['/r/beside', (own) => `${own.replace('127.0.0.1', 'localhost')}/p/0.jpg`],
	['/r/metadata', () => 'http://169.254.169.254/latest/meta-data/iam/security-credentials/role'],
	['/r/loop', () => '/r/loop'],
]);
let downloads = 0;
let notModified = 0;
let host: LocalServer;

beforeAll(async () => {
	host = await listenLocal((req, res) => {
		received.push(req.headers);
		// Never answered; answered with headers and the body's first bytes only.
		if (req.url === '/p/hang.jpg') return;
		if (req.url === '/p/trickle.jpg') {
			res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': '5000' });
			res.write(jpeg(100));
			return;
		}
		const redirect = redirects.get(req.url ?? '');
		if (redirect) {
			res.writeHead(302, { location: redirect(host.url) }).end();
			return;
		}
		if (req.url === '/p/long-type.jpg') {
			res.writeHead(200, { 'content-type': `image/${'x'.repeat(5000)}` }).end(jpeg());
			return;
		}
		const photo = photos.get(req.url ?? '');
		if (!photo) {
			res.writeHead(404).end();
			return;
		}
		const etag = etags.get(req.url ?? '') ?? `"${md5(photo)}"`;
		if (req.headers['if-none-match'] === etag) {
			notModified++;
			res.writeHead(304, { etag }).end();
			return;
		}
		downloads++;
		res.writeHead(200, { 'content-type': 'image/jpeg', etag }).end(photo);
	});
});

afterAll(async () => await host.close());

beforeEach(async () => {
	photos.clear();
	etags.clear();
	received.length = 0;
	downloads = 0;
	notModified = 0;
	await runNode({
		node,
		parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
		credentials: credentials(),
	});
	emulator.reset();
});

/** Image Upload by Photo URL, the photo host on loopback named in Allowed Internal Hosts. */
function byUrl(options: INodeParameters = {}, withVersion = true): INodeParameters {
	return {
		resource: 'image',
		operation: 'upload',
		imagesFrom: 'url',
		photoUrl: '={{ $json.url }}',
		photoVersion: withVersion ? '={{ $json.updatedAt }}' : '',
		options: {
			knownMd5: '={{ $json.knownMd5 ?? "" }}',
			knownHashcode: '={{ $json.knownHashcode ?? "" }}',
			knownVersion: '={{ $json.knownVersion ?? "" }}',
			allowedInternalHosts: new URL(host.url).host,
			...options,
		},
	};
}

function posts(): number {
	return emulator.stats().requests['POST /api/images'] ?? 0;
}

function hashcodeOf(data: Buffer): string | undefined {
	return emulator.images().find((record) => record.md5 === md5(data))?.hashcode;
}

/** Items for products whose photos are at `paths`, each at version `updatedAt`. */
function products(paths: string[], updatedAt = '2026-01-01'): INodeExecutionData[] {
	return paths.map((path) => ({ json: { url: `${host.url}${path}`, updatedAt } }));
}

/** What a workflow stores of each output item and gives back the next night. */
function remembered(
	output: INodeExecutionData[],
	input: INodeExecutionData[],
): INodeExecutionData[] {
	return output.map(({ json, pairedItem }) => ({
		json: {
			...input[(pairedItem as { item: number }).item].json,
			knownMd5: json.md5,
			knownHashcode: json.hashcode,
			knownVersion: json.version,
		},
	}));
}

describe('Image Upload by Photo URL', () => {
	it('fetches each photo once, shared ones too, without the credential, and uploads them in one request', async () => {
		const files = [jpeg(), jpeg(), jpeg()];
		files.forEach((data, n) => photos.set(`/p/${n}.jpg`, data));
		const input = products(['/p/0.jpg', '/p/1.jpg', '/p/0.jpg', '/p/2.jpg']);

		const result = await runNode({
			node,
			parameters: byUrl(),
			items: input,
			credentials: credentials(),
		});

		expect(result.error).toBeUndefined();
		expect(downloads).toBe(3);
		expect(posts()).toBe(1);
		expect(emulator.stats().images).toBe(3);
		expect(
			result.output[0].map(({ json, pairedItem }) => [
				pairedItem,
				json.url,
				json.version,
				json.md5,
				json.hashcode,
			]),
		).toEqual(
			[0, 1, 0, 2].map((n, item) => [
				{ item },
				`${host.url}/p/${n}.jpg`,
				'2026-01-01',
				md5(files[n]),
				hashcodeOf(files[n]),
			]),
		);
		expect(received.every((headers) => headers.authorization === undefined)).toBe(true);
		expect(
			received.every((headers) => !Object.keys(headers).some((name) => /customer/i.test(name))),
		).toBe(true);
	});

	it('downloads and sends nothing for unchanged photos the workflow remembers, after the process forgot everything; only changed ones', async () => {
		const files = [jpeg(), jpeg(), jpeg(), jpeg()];
		files.forEach((data, n) => photos.set(`/p/${n}.jpg`, data));
		const input = products(['/p/0.jpg', '/p/1.jpg', '/p/2.jpg', '/p/3.jpg']);
		const first = await runNode({
			node,
			parameters: byUrl(),
			items: input,
			credentials: credentials(),
		});
		const stored = remembered(first.output[0], input);

		// A restart without Redis: no known image in the process.
		await runNode({
			node,
			parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
			credentials: credentials(),
		});
		emulator.reset();
		downloads = 0;
		const changed = jpeg();
		photos.set('/p/2.jpg', changed);
		stored[2].json.updatedAt = '2026-02-01';

		const night = await runNode({
			node,
			parameters: byUrl(),
			items: stored,
			credentials: credentials(),
		});

		expect(night.error).toBeUndefined();
		expect(downloads).toBe(1);
		expect(posts()).toBe(1);
		expect(emulator.stats().images).toBe(1);
		expect(night.output[0].map(({ json }) => [json.known, json.version, json.hashcode])).toEqual([
			['item', '2026-01-01', first.output[0][0].json.hashcode],
			['item', '2026-01-01', first.output[0][1].json.hashcode],
			[undefined, '2026-02-01', hashcodeOf(changed)],
			['item', '2026-01-01', first.output[0][3].json.hashcode],
		]);
	});

	it("asks the host with the photo's ETag when the source gives no version: a photo not modified is not downloaded", async () => {
		const files = [jpeg(), jpeg()];
		files.forEach((data, n) => photos.set(`/p/${n}.jpg`, data));
		const input = products(['/p/0.jpg', '/p/1.jpg']);
		const first = await runNode({
			node,
			parameters: byUrl({}, false),
			items: input,
			credentials: credentials(),
		});
		expect(first.output[0][0].json.version).toBe(`etag:"${md5(files[0])}"`);
		const stored = remembered(first.output[0], input);

		emulator.reset();
		downloads = 0;
		const night = await runNode({
			node,
			parameters: byUrl({}, false),
			items: stored,
			credentials: credentials(),
		});

		expect(night.error).toBeUndefined();
		expect(notModified).toBe(2);
		expect(downloads).toBe(0);
		expect(Object.values(emulator.stats().requests).reduce((sum, n) => sum + n, 0)).toBe(0);
		expect(night.output[0].map(({ json }) => [json.known, json.hashcode])).toEqual([
			['item', first.output[0][0].json.hashcode],
			['item', first.output[0][1].json.hashcode],
		]);
	});

	it.each([
		['a tab', '"a\tb"'],
		['a Latin-1 letter', '"caf\u00e9"'],
		['201 characters', `"${'a'.repeat(199)}"`],
		['markup', '"<img src=x onerror=alert(1)>"'],
	])(
		'keeps no version for an ETag holding %s: the next night fetches the photo plainly, and it costs no upload',
		async (_, etag) => {
			const photo = jpeg();
			photos.set('/p/0.jpg', photo);
			etags.set('/p/0.jpg', etag);
			const input = products(['/p/0.jpg']);
			const first = await runNode({
				node,
				parameters: byUrl({}, false),
				items: input,
				credentials: credentials(),
			});
			expect(first.output[0][0].json).toEqual(
				expect.objectContaining({ version: '', md5: md5(photo), hashcode: hashcodeOf(photo) }),
			);

			emulator.reset();
			received.length = 0;
			const night = await runNode({
				node,
				parameters: byUrl({}, false),
				items: remembered(first.output[0], input),
				credentials: credentials(),
			});

			expect(night.error).toBeUndefined();
			expect(received.map((headers) => headers['if-none-match'])).toEqual([undefined]);
			expect(downloads).toBe(2);
			expect(posts()).toBe(0);
			expect(night.output[0][0].json).toEqual(
				expect.objectContaining({ known: 'item', hashcode: first.output[0][0].json.hashcode }),
			);
		},
	);

	it('keeps an ETag of 200 plain characters as it came, and asks with it', async () => {
		const photo = jpeg();
		const etag = `W/"${'a'.repeat(194)} b"`;
		photos.set('/p/0.jpg', photo);
		etags.set('/p/0.jpg', etag);
		const input = products(['/p/0.jpg']);
		const first = await runNode({
			node,
			parameters: byUrl({}, false),
			items: input,
			credentials: credentials(),
		});
		expect(first.output[0][0].json.version).toBe(`etag:${etag}`);

		received.length = 0;
		const night = await runNode({
			node,
			parameters: byUrl({}, false),
			items: remembered(first.output[0], input),
			credentials: credentials(),
		});

		expect(received.map((headers) => headers['if-none-match'])).toEqual([etag]);
		expect(notModified).toBe(1);
		expect(night.output[0][0].json.known).toBe('item');
	});

	it('fails alone an item whose photo is larger than Max Photo Size, is missing, or whose URL is not http(s)', async () => {
		photos.set('/p/small.jpg', jpeg(1000));
		photos.set('/p/large.jpg', jpeg(300_000));
		const input = [
			...products(['/p/small.jpg', '/p/large.jpg', '/p/missing.jpg']),
			{ json: { url: 'file:///etc/passwd', updatedAt: '1' } },
		];

		const result = await runNode({
			node,
			parameters: byUrl({ maxPhotoMegabytes: 0.1 }),
			items: input,
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.output[0].map(({ json }) => json.error ?? json.hashcode)).toEqual([
			expect.stringMatching(/^[0-9a-f]{32}$/),
			`The photo ${host.url}/p/large.jpg of item 1 is larger than Max Photo Size (104857 bytes)`,
			`The photo ${host.url}/p/missing.jpg of item 2 could not be fetched (HTTP 404)`,
			'The Photo URL of item 3 is not an http(s) URL: "file:///etc/passwd"',
		]);
		expect(posts()).toBe(1);
	});

	it('takes a Photo Timeout in fractions of a second, as an expression may give it', async () => {
		photos.set('/p/0.jpg', jpeg());

		const result = await runNode({
			node,
			parameters: byUrl({ photoTimeoutSeconds: 2.5005 }),
			items: products(['/p/0.jpg']),
			credentials: credentials(),
		});

		expect(result.error).toBeUndefined();
		expect(result.output[0][0].json.error).toBeUndefined();
		expect(result.output[0][0].json.hashcode).toEqual(expect.any(String));
	});

	it('fails alone an item whose photo does not arrive within Photo Timeout, headers or body', async () => {
		photos.set('/p/fine.jpg', jpeg());
		const started = Date.now();

		const result = await runNode({
			node,
			parameters: byUrl({ photoTimeoutSeconds: 1 }),
			items: products(['/p/hang.jpg', '/p/fine.jpg', '/p/trickle.jpg']),
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.output[0].map(({ json }) => [json.error, json.errorDetails])).toEqual([
			[
				`The photo ${host.url}/p/hang.jpg of item 0 could not be fetched`,
				'No answer within 1 s (Photo Timeout).',
			],
			[undefined, undefined],
			[
				`The photo ${host.url}/p/trickle.jpg of item 2 could not be read to its end`,
				'Not sent within 1 s (Photo Timeout).',
			],
		]);
		expect(Date.now() - started).toBeLessThan(10_000);
		expect(posts()).toBe(1);
	});
});

describe('Photo URLs reach the public internet only, unless Allowed Internal Hosts names the host', () => {
	const port = () => new URL(host.url).port;
	const refused = (reason: string) =>
		expect.stringMatching(new RegExp(`is not fetched: ${reason}$`));
	/** A host name refused: the same words whether it has no address or an internal one. */
	const hidden = (hostname: string) =>
		`${hostname} is either unreachable or not on the public internet (a host inside your network is reached only where Allowed Internal Hosts names it)`;

	it('refuses every internal address, however written, before a byte is sent, with the same text whether it answers or not', async () => {
		photos.set('/p/0.jpg', jpeg());
		const urls = [
			`${host.url}/p/0.jpg`,
			'http://127.0.0.1:1/p/0.jpg',
			`http://localhost:${port()}/p/0.jpg`,
			`http://0x7f000001:${port()}/p/0.jpg`,
			`http://2130706433:${port()}/p/0.jpg`,
			`http://127.1:${port()}/p/0.jpg`,
			`http://[::ffff:127.0.0.1]:${port()}/p/0.jpg`,
			`http://[::1]:${port()}/p/0.jpg`,
			'http://169.254.169.254/latest/meta-data/iam/security-credentials/role',
			'http://10.0.0.1/p.jpg',
			'http://172.16.5.4/p.jpg',
			'http://192.168.1.1/p.jpg',
			'http://100.64.0.1/p.jpg',
			'http://0.0.0.0/p.jpg',
			'http://224.0.0.1/p.jpg',
			'http://255.255.255.255/p.jpg',
			'http://[fd00::1]/p.jpg',
			'http://[fe80::1]/p.jpg',
			'http://[::]/p.jpg',
			'http://[ff02::1]/p.jpg',
			'http://[::ffff:a9fe:a9fe]/p.jpg',
			// NAT64 and SIIT: internal even where they embed a public address (8.8.8.8).
			'http://[64:ff9b::808:808]/p.jpg',
			'http://[::ffff:0:808:808]/p.jpg',
		];

		const result = await runNode({
			node,
			parameters: byUrl({ allowedInternalHosts: '' }),
			items: urls.map((url) => ({ json: { url, updatedAt: '1' } })),
			credentials: credentials(),
			continueOnFail: true,
		});

		const loopback = refused('it leads to a loopback address');
		expect(result.output[0].map(({ json }) => json.error)).toEqual([
			loopback,
			loopback,
			expect.stringMatching(/is not fetched: localhost is either unreachable or not on the public/),
			loopback,
			loopback,
			loopback,
			loopback,
			loopback,
			refused('it leads to a link-local address \\(cloud metadata among them\\)'),
			refused('it leads to a private address'),
			refused('it leads to a private address'),
			refused('it leads to a private address'),
			refused('it leads to a carrier-grade NAT address, inside a provider network'),
			refused('it leads to an unspecified address'),
			refused('it leads to a multicast address'),
			refused('it leads to a reserved or broadcast address'),
			refused('it leads to a private \\(unique-local\\) address'),
			refused('it leads to a link-local address'),
			refused('it leads to an unspecified address'),
			refused('it leads to a multicast address'),
			refused('it leads to a link-local address \\(cloud metadata among them\\)'),
			refused('it leads to a NAT64 address, translated to IPv4 inside the network'),
			refused(
				'it leads to an IPv4-translated \\(SIIT\\) address, translated to IPv4 inside the network',
			),
		]);
		expect(result.output[0][0].json.errorDetails).toMatch(/Allowed Internal Hosts/);
		expect(received).toHaveLength(0);
		expect(posts()).toBe(0);
	});

	it('fetches from the host the option names, and still refuses the same machine under another name or port', async () => {
		photos.set('/p/0.jpg', jpeg());

		const result = await runNode({
			node,
			parameters: byUrl(),
			items: [
				`${host.url}/p/0.jpg`,
				`http://localhost:${port()}/p/0.jpg`,
				'http://127.0.0.1:1/p/0.jpg',
				`${host.url}/r/same`,
				`${host.url}/r/beside`,
				`${host.url}/r/metadata`,
			].map((url) => ({ json: { url, updatedAt: '1' } })),
			credentials: credentials(),
			continueOnFail: true,
		});

		const hashcode = expect.stringMatching(/^[0-9a-f]{32}$/);
		expect(result.output[0].map(({ json }) => json.error ?? json.hashcode)).toEqual([
			hashcode,
			`The photo http://localhost:${port()}/p/0.jpg of item 1 is not fetched: ${hidden('localhost')}`,
			refused('it leads to a loopback address'),
			hashcode,
			`The photo ${host.url}/r/beside of item 4 is not fetched: ${hidden('localhost')}`,
			refused('it leads to a link-local address \\(cloud metadata among them\\)'),
		]);
		// The photo, the three redirects and the hop /r/same leads to; nothing to the refused hosts.
		expect(received.map((headers) => headers.host)).toEqual(Array(5).fill(new URL(host.url).host));
	});

	it('says the same of a name that does not resolve as of a name that leads inside the network, before a byte is sent', async () => {
		const urls = [
			'http://nowhere.invalid/p/0.jpg',
			`http://localhost:${port()}/p/0.jpg`,
			`${host.url}/r/nowhere`,
			`${host.url}/r/beside`,
		];
		redirects.set('/r/nowhere', () => 'http://nowhere.invalid/p/0.jpg');
		photos.set('/p/0.jpg', jpeg());

		const result = await runNode({
			node,
			parameters: byUrl(),
			items: urls.map((url) => ({ json: { url, updatedAt: '1' } })),
			credentials: credentials(),
			continueOnFail: true,
		});
		redirects.delete('/r/nowhere');

		const said = result.output[0].map(({ json }) => ({
			error: json.error,
			errorDetails: json.errorDetails,
		}));
		expect(said[0]).toEqual({
			error: `The photo http://nowhere.invalid/p/0.jpg of item 0 is not fetched: ${hidden('nowhere.invalid')}`,
			errorDetails:
				'Photo URLs reach the public internet only (at most 5 redirects, each judged the same). To fetch photos from a host inside your network, name it in Allowed Internal Hosts.',
		});
		// The words are one: only the URL, the item and the host differ.
		const words = ({ error, errorDetails }: (typeof said)[number], index: number) => ({
			error: String(error)
				.replace(urls[index], '<url>')
				.replace(`item ${index}`, 'item <n>')
				.replace(/\S+ is either/, '<host> is either'),
			errorDetails,
		});
		expect(said.map(words)).toEqual(Array(4).fill(words(said[0], 0)));
		// The two redirects on the named host alone; nothing to the hosts refused.
		expect(received).toHaveLength(2);
	});

	it('allows a network named in CIDR notation, and nothing wider', async () => {
		photos.set('/p/0.jpg', jpeg());

		const result = await runNode({
			node,
			parameters: byUrl({ allowedInternalHosts: '127.0.0.0/8, 10.1.2.3:8080' }),
			items: [
				`${host.url}/p/0.jpg`,
				'http://10.1.2.4:8080/p.jpg',
				'http://10.1.2.3:8081/p.jpg',
			].map((url) => ({ json: { url, updatedAt: '1' } })),
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.output[0].map(({ json }) => json.error ?? json.hashcode)).toEqual([
			expect.stringMatching(/^[0-9a-f]{32}$/),
			refused('it leads to a private address'),
			refused('it leads to a private address'),
		]);
	});

	it('follows at most 5 redirects, each judged as the first request', async () => {
		const result = await runNode({
			node,
			parameters: byUrl(),
			items: [{ json: { url: `${host.url}/r/loop`, updatedAt: '1' } }],
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.output[0][0].json.error).toEqual(refused('it redirects more than 5 times'));
		expect(received).toHaveLength(6);
	});

	it('refuses a Photo URL with a user name or password without showing it, and a malformed Allowed Internal Hosts or one naming every address, before any request', async () => {
		const result = await runNode({
			node,
			parameters: byUrl({ allowedInternalHosts: '={{ $json.allowed }}' }),
			items: [
				{
					json: {
						url: `http://user:secret@${new URL(host.url).host}/p/0.jpg`,
						allowed: new URL(host.url).host,
					},
				},
				{ json: { url: `${host.url}/p/0.jpg`, allowed: '10.0.0.0/33' } },
				{ json: { url: `${host.url}/p/0.jpg`, allowed: 'http://10.0.0.1/' } },
				// Every address: the option turned off, refused as the others.
				{ json: { url: `${host.url}/p/0.jpg`, allowed: '0.0.0.0/0' } },
				{ json: { url: `${host.url}/p/0.jpg`, allowed: `${new URL(host.url).host}, ::/0` } },
				{ json: { url: `${host.url}/p/0.jpg`, allowed: '/0' } },
			],
			credentials: credentials(),
			continueOnFail: true,
		});

		expect(result.output[0].map(({ json }) => json.error)).toEqual([
			'The Photo URL of item 0 carries a user name or password, which are never sent or shown',
			'The Allowed Internal Hosts of item 1 are not valid: "10.0.0.0/33" is not a network in CIDR notation',
			'The Allowed Internal Hosts of item 2 are not valid: "http://10.0.0.1/" is not a host, host:port or network',
			...['0.0.0.0/0', '::/0', '/0'].map(
				(entry, index) =>
					`The Allowed Internal Hosts of item ${index + 3} are not valid: "${entry}" names every address; name the hosts or networks inside your network that may be reached`,
			),
		]);
		expect(JSON.stringify(result.output)).not.toContain('secret');
		expect(received).toHaveLength(0);
	});

	it('uploads a photo whose Content-Type is not a short image type as application/octet-stream', async () => {
		const result = await runNode({
			node,
			parameters: byUrl(),
			items: products(['/p/long-type.jpg']),
			credentials: credentials(),
		});

		expect(result.error).toBeUndefined();
		expect(emulator.images().at(-1)?.contentType).toBe('application/octet-stream');
	});
});
