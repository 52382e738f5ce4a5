/**
 * Which network addresses a URL from the data (a photo, an error document on another host) may
 * reach: the public internet, and inside the company network only what the node names. The rules
 * are read on the address a connection actually goes to, written as the URL parser writes it, so
 * every spelling of one address (0x7f000001, 2130706433, 127.1, ::ffff:127.0.0.1) is judged as one.
 */

/** An address as bits: 32 for IPv4, 128 for IPv6. */
interface Bits {
	v6: boolean;
	value: bigint;
}

function v4Bits(text: string): bigint | undefined {
	const parts = text.split('.');
	if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) < 256))
		return undefined;
	return parts.reduce((bits, part) => (bits << 8n) | BigInt(part), 0n);
}

function v6Bits(text: string): bigint | undefined {
	let body = text.toLowerCase();
	const tailV4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(body);
	if (tailV4) {
		const v4 = v4Bits(tailV4[1]);
		if (v4 === undefined) return undefined;
		body = `${body.slice(0, -tailV4[1].length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
	}
	const halves = body.split('::');
	if (halves.length > 2) return undefined;
	const groups = (half: string) => (half === '' ? [] : half.split(':'));
	const head = groups(halves[0]);
	const tail = halves.length === 2 ? groups(halves[1]) : [];
	const missing = 8 - head.length - tail.length;
	if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
	const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
	if (!all.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return undefined;
	return all.reduce((bits, group) => (bits << 16n) | BigInt(`0x${group}`), 0n);
}

/**
 * An IP address as bits, written any way the URL parser reads as one (decimal, hex, short IPv4;
 * IPv6 with or without brackets, with a zone index dropped); undefined for a host name.
 */
export function addressBits(address: string): Bits | undefined {
	const bare = address.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
	if (bare.includes(':')) {
		const value = v6Bits(bare);
		return value === undefined ? undefined : { v6: true, value };
	}
	// The URL parser writes every IPv4 spelling in dotted decimal; a host name stays a name.
	if (!URL.canParse(`http://${bare}/`)) return undefined;
	const value = v4Bits(new URL(`http://${bare}/`).hostname);
	return value === undefined ? undefined : { v6: false, value };
}

/** A network of addresses: its first address, how many leading bits name it, and what it is. */
interface Network {
	start: Bits;
	prefix: number;
	what: string;
}

/** The networks of a table, parsed once (the tables below are read at every connection). */
function networks(table: Array<[string, number, string]>): Network[] {
	return table.map(([start, prefix, what]) => ({
		start: addressBits(start) as Bits,
		prefix,
		what,
	}));
}

/** Whether the network of `start` whose first `prefix` bits count holds the address. */
function inNetwork(bits: Bits, start: Bits, prefix: number): boolean {
	if (start.v6 !== bits.v6) return false;
	const shift = (bits.v6 ? 128n : 32n) - BigInt(prefix);
	return bits.value >> shift === start.value >> shift;
}

/** IPv4 ranges that are not the public internet, with why. */
const INTERNAL_V4 = networks([
	['0.0.0.0', 8, 'an unspecified address'],
	['10.0.0.0', 8, 'a private address'],
	['100.64.0.0', 10, 'a carrier-grade NAT address, inside a provider network'],
	['127.0.0.0', 8, 'a loopback address'],
	['169.254.0.0', 16, 'a link-local address (cloud metadata among them)'],
	['172.16.0.0', 12, 'a private address'],
	['192.0.0.0', 24, 'a reserved address'],
	['192.168.0.0', 16, 'a private address'],
	['198.18.0.0', 15, 'a reserved address'],
	['224.0.0.0', 4, 'a multicast address'],
	['240.0.0.0', 4, 'a reserved or broadcast address'],
]);

/**
 * IPv6 ranges that are not the public internet (beside those that embed the IPv4 address a
 * connection ends up at, below).
 */
const INTERNAL_V6 = networks([
	['::', 128, 'an unspecified address'],
	['::1', 128, 'a loopback address'],
	['100::', 64, 'a reserved address'],
	['fc00::', 7, 'a private (unique-local) address'],
	// Translated to IPv4 by a gateway of the network (NAT64, RFC 6052 and RFC 8215's local use;
	// SIIT's IPv4-translated form): internal whatever IPv4 address they embed, since the gateway,
	// not the public internet, decides where they lead.
	['64:ff9b::', 96, 'a NAT64 address, translated to IPv4 inside the network'],
	['64:ff9b:1::', 48, 'a local-use NAT64 address, translated to IPv4 inside the network'],
	['::ffff:0:0:0', 96, 'an IPv4-translated (SIIT) address, translated to IPv4 inside the network'],
	['fe80::', 10, 'a link-local address'],
	['fec0::', 10, 'a private (site-local) address'],
	['ff00::', 8, 'a multicast address'],
]);

/** IPv6 prefixes whose last 32 bits are an IPv4 address a connection ends up at. */
const EMBEDDING_V4 = networks([
	['::ffff:0:0', 96, 'IPv4-mapped'],
	['::', 96, 'IPv4-compatible'],
]);

/** 6to4: the 32 bits after its first 16 are an IPv4 address a connection ends up at. */
const SIX_TO_FOUR = networks([['2002::', 16, '6to4']])[0];

/**
 * Why an address is not on the public internet ("a loopback address"), or undefined when it is.
 * An IPv4-mapped, IPv4-compatible or 6to4 address is judged by the IPv4 address it embeds; a
 * translated one (NAT64, SIIT) is internal whatever it embeds, unless Allowed Internal Hosts names
 * its network. Anything that is not an address is internal: a connection only ever goes to one.
 */
export function internalReason(address: string): string | undefined {
	return internalReasonOf(addressBits(address));
}

function internalReasonOf(bits: Bits | undefined): string | undefined {
	if (!bits) return 'not an IP address';
	if (bits.v6) {
		const embeds = EMBEDDING_V4.some((network) => inNetwork(bits, network.start, network.prefix));
		// :: and ::1 are IPv4-compatible in form only.
		if (embeds && bits.value > 1n)
			return internalReasonOf({ v6: false, value: bits.value & 0xffffffffn });
		if (inNetwork(bits, SIX_TO_FOUR.start, SIX_TO_FOUR.prefix))
			return internalReasonOf({ v6: false, value: (bits.value >> 80n) & 0xffffffffn });
	}
	const ranges = bits.v6 ? INTERNAL_V6 : INTERNAL_V4;
	return ranges.find((network) => inNetwork(bits, network.start, network.prefix))?.what;
}

/** One entry of an allowance: a host (any port or one), or a network of addresses. */
type AllowedEntry =
	| { host: string; port?: string }
	| { network: Bits; prefix: number; text: string };

/** Internal hosts and networks a node lets its URLs reach, as the user named them. */
export interface Allowance {
	entries: AllowedEntry[];
}

/**
 * Reads an allowance: entries separated by commas, spaces or lines, each a host name or IP address
 * (any port), host:port ([IPv6]:port), or a network in CIDR notation (10.1.0.0/16, fd00::/8) that
 * is not every address (a prefix of 0). Throws an Error naming the first entry that is none of
 * these: nothing wider than what is named.
 */
export function parseAllowance(text: string): Allowance {
	const entries = text
		.split(/[\s,]+/)
		.filter(Boolean)
		.map((entry): AllowedEntry => {
			const cidr = /^(.*)\/(\d{1,3})$/.exec(entry);
			if (cidr) {
				const network = addressBits(cidr[1]);
				const prefix = Number(cidr[2]);
				// 0.0.0.0/0, ::/0, a bare /0: the whole internet, which would turn the option off.
				if (prefix === 0)
					throw new Error(
						`"${entry}" names every address; name the hosts or networks inside your network that may be reached`,
					);
				if (network && prefix <= (network.v6 ? 128 : 32))
					return { network, prefix, text: entry.toLowerCase() };
				throw new Error(`"${entry}" is not a network in CIDR notation`);
			}
			const bareV6 = /^[^[].*:.*:/.test(entry);
			const address = `http://${bareV6 ? `[${entry}]` : entry}/`;
			if (URL.canParse(address)) {
				const url = new URL(address);
				// The parser drops http's own port 80; an entry naming it still means that port alone.
				const port = url.port || (bareV6 ? undefined : /:(\d+)$/.exec(entry)?.[1]);
				if (url.username === '' && url.password === '' && url.pathname === '/' && !url.search)
					return { host: url.hostname, ...(port ? { port: String(Number(port)) } : {}) };
			}
			throw new Error(`"${entry}" is not a host, host:port or network`);
		});
	return { entries };
}

/** Whether the allowance names this URL's host (as the URL parser writes it) on its port. */
export function allowsHost(allowance: Allowance, url: URL): boolean {
	const port = url.port || (url.protocol === 'https:' ? '443' : '80');
	return allowance.entries.some(
		(entry) =>
			'host' in entry && entry.host === url.hostname && (!entry.port || entry.port === port),
	);
}

/** Whether a network of the allowance holds this address. */
function allowsAddress(allowance: Allowance, bits: Bits): boolean {
	return allowance.entries.some(
		(entry) => 'network' in entry && inNetwork(bits, entry.network, entry.prefix),
	);
}

/**
 * Why a connection for `url` must not go to `address`, or undefined when it may: a public address,
 * a host the allowance names, or an address in one of its networks.
 */
export function refusalOf(allowance: Allowance, url: URL, address: string): string | undefined {
	if (allowsHost(allowance, url)) return undefined;
	const bits = addressBits(address);
	if (bits && allowsAddress(allowance, bits)) return undefined;
	const reason = internalReasonOf(bits);
	return reason && `it leads to ${reason}`;
}

/**
 * Why a connection for a host name is refused when the name has no address, or leads to an
 * internal one: the same words for both, so that a URL from the data cannot learn which names
 * exist inside the network, or where they lead.
 */
export function nameRefusal(hostname: string): string {
	return `${hostname} is either unreachable or not on the public internet (a host inside your network is reached only where Allowed Internal Hosts names it)`;
}

/** A URL refused before any byte is sent to it; the message says why, never the URL itself. */
export class RefusedUrlError extends Error {
	constructor(reason: string) {
		super(reason);
		this.name = 'RefusedUrlError';
	}
}
