/**
 * The one way out to other hosts says the same of a host name that has no address as of one that
 * leads inside the network, in both editions: the full one (its own client, the address judged in
 * the connection's lookup) and the verified one (n8n's egress filter before n8n's request helper).
 * The resolver and the filter are stand-ins: no lookup and no connection leave the test. In the
 * verified edition the name is resolved once and n8n's helper is told the address judged.
 */
import type { INode } from 'n8n-workflow';

import { EDITION as fullEdition } from '../../nodes/edition/edition';
import { EDITION as verifiedEdition } from '../../nodes/edition/edition.verified';
import { type Edition, useEdition } from '../../nodes/shared/ports';
import {
	parseAllowance,
	RefusedUrlError,
	requestElsewhere,
	type ServiceContext,
} from '../../nodes/shared/transport';

/** What the stand-in resolver knows: every other name has no address. */
const NAMES: Record<string, string[]> = {
	'db.corp.example': ['10.0.0.5'],
	'half.example': ['93.184.215.14', '127.0.0.1'],
	'nat64.example': ['64:ff9b::a00:5'],
	'photos.example': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c', '93.184.215.14', '93.184.215.15'],
	'empty.example': [],
};

/** Names n8n's default blocked ranges let through: they lack NAT64, which the package counts as internal. */
const PASSED_BY_N8N = new Set(['nat64.example']);

/** What n8n's default blocked ranges hold, of the stand-in's addresses. */
function isInternal(address: string): boolean {
	return /^(10\.|127\.)/.test(address);
}

function notFound(hostname: string): Error {
	return Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
}

type Found = Array<{ address: string; family: number }>;

/** Each time the stand-in filter resolved a name, for counting resolutions. */
const resolved: string[] = [];

/** n8n's egress filter as the stand-in resolver sees the names; it refuses what leads inside. */
const filter = {
	createSecureLookup:
		() =>
		(
			hostname: string,
			_options: unknown,
			callback: (error: Error | null, found: Found) => void,
		) => {
			resolved.push(hostname);
			const found = NAMES[hostname];
			const blocked = found && !PASSED_BY_N8N.has(hostname) && found.some(isInternal);
			setImmediate(() =>
				found && !blocked
					? callback(
							null,
							found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
						)
					: callback(
							found ? new Error(`The target ${found.join(', ')} is blocked`) : notFound(hostname),
							[],
						),
			);
		},
	validateUrl: async (url: URL) => {
		resolved.push(url.hostname);
		const found = NAMES[url.hostname];
		if (!found) throw notFound(url.hostname);
		if (PASSED_BY_N8N.has(url.hostname) || !found.some(isInternal))
			return { ok: true as const, result: undefined };
		return { ok: false as const, error: new Error(`The target ${found.join(', ')} is blocked`) };
	},
};

const httpRequest = jest.fn();

beforeEach(() => {
	httpRequest.mockReset();
	resolved.length = 0;
});

const context = {
	getNode: () => ({ name: 'Upload' }) as INode,
	helpers: { getSecureEgressFilter: () => filter, httpRequest },
} as unknown as ServiceContext;

async function refusal(url: string, allowed = ''): Promise<unknown> {
	return await requestElsewhere(context, {
		url,
		headers: {},
		signal: AbortSignal.timeout(5000),
		allowance: parseAllowance(allowed),
		plainHttp: true,
	}).then(
		() => undefined,
		(error: unknown) => error,
	);
}

const hidden = (hostname: string) =>
	`${hostname} is either unreachable or not on the public internet (a host inside your network is reached only where Allowed Internal Hosts names it)`;

afterAll(() => useEdition(fullEdition));

describe.each([
	['full', fullEdition],
	['verified', verifiedEdition],
] as Array<[string, Edition]>)('in the %s edition', (_name, edition) => {
	beforeAll(() => useEdition(edition));

	it.each([
		['has no address', 'nowhere.example'],
		['leads to a private address', 'db.corp.example'],
		['leads to a public and a loopback address', 'half.example'],
		["leads to a NAT64 address, which n8n's default ranges let through", 'nat64.example'],
	])('a name that %s is refused in the same words, before any request', async (_what, name) => {
		const error = await refusal(`http://${name}/p.jpg`);
		expect(error).toBeInstanceOf(RefusedUrlError);
		expect((error as Error).message).toBe(hidden(name));
		expect(httpRequest).not.toHaveBeenCalled();
	});

	it('an address written in the URL is still refused with its reason: it tells nothing of a name', async () => {
		expect(((await refusal('http://10.0.0.5/p.jpg')) as Error).message).toBe(
			'it leads to a private address',
		);
	});
});

it("a name that Allowed Internal Hosts names keeps its resolver's words: it is the user's own", async () => {
	useEdition(fullEdition);
	const error = await refusal('http://nowhere.example/p.jpg', 'nowhere.example');
	expect(error).not.toBeInstanceOf(RefusedUrlError);
	expect((error as Error).message).toBe('getaddrinfo ENOTFOUND nowhere.example');
});

describe('in the verified edition, a public name', () => {
	beforeAll(() => useEdition(verifiedEdition));

	const get = async (url: string) =>
		await requestElsewhere(context, {
			url,
			headers: {},
			signal: AbortSignal.timeout(5000),
			allowance: parseAllowance(''),
			plainHttp: false,
		});

	it("is resolved once, and n8n's helper connects to an address judged instead of resolving it again", async () => {
		httpRequest.mockResolvedValue({ statusCode: 200, headers: {}, body: undefined });
		await get('https://photos.example/p.jpg');
		expect(resolved).toEqual(['photos.example']);
		expect(httpRequest).toHaveBeenCalledTimes(1);
		expect(httpRequest.mock.calls[0][0]).toMatchObject({
			url: 'https://photos.example/p.jpg',
			agentOptions: { host: '93.184.215.14' },
		});
	});

	it('whose resolver answers no address is refused, not left to the helper to look up', async () => {
		const error = await get('https://empty.example/p.jpg').catch((caught: unknown) => caught);
		expect((error as Error).message).toBe(hidden('empty.example'));
		expect(httpRequest).not.toHaveBeenCalled();
	});
});
