import { internalReason, parseAllowance, refusalOf } from '../../nodes/shared/transport/addresses';

describe('internalReason', () => {
	it.each([
		['127.0.0.1', 'a loopback address'],
		['0x7f000001', 'a loopback address'],
		['2130706433', 'a loopback address'],
		['127.1', 'a loopback address'],
		['::1', 'a loopback address'],
		['::ffff:127.0.0.1', 'a loopback address'],
		['::ffff:7f00:1', 'a loopback address'],
		['::127.0.0.1', 'a loopback address'],
		['2002:c0a8:0101::1', 'a private address'],
		// Translated by a gateway of the network: internal whatever IPv4 address they embed.
		['64:ff9b::a9fe:a9fe', 'a NAT64 address, translated to IPv4 inside the network'],
		['64:ff9b::808:808', 'a NAT64 address, translated to IPv4 inside the network'],
		['64:ff9b::8.8.8.8', 'a NAT64 address, translated to IPv4 inside the network'],
		['64:ff9b:1::808:808', 'a local-use NAT64 address, translated to IPv4 inside the network'],
		['64:ff9b:1:ffff::1', 'a local-use NAT64 address, translated to IPv4 inside the network'],
		[
			'::ffff:0:808:808',
			'an IPv4-translated (SIIT) address, translated to IPv4 inside the network',
		],
		[
			'::ffff:0:127.0.0.1',
			'an IPv4-translated (SIIT) address, translated to IPv4 inside the network',
		],
		['169.254.169.254', 'a link-local address (cloud metadata among them)'],
		['10.1.2.3', 'a private address'],
		['172.31.255.255', 'a private address'],
		['192.168.0.1', 'a private address'],
		['100.100.100.200', 'a carrier-grade NAT address, inside a provider network'],
		['0.0.0.0', 'an unspecified address'],
		['::', 'an unspecified address'],
		['224.0.0.251', 'a multicast address'],
		['ff02::1', 'a multicast address'],
		['255.255.255.255', 'a reserved or broadcast address'],
		['fd12:3456::1', 'a private (unique-local) address'],
		['fe80::1%eth0', 'a link-local address'],
		['localhost', 'not an IP address'],
	])('%s: %s', (address, reason) => {
		expect(internalReason(address)).toBe(reason);
	});

	it.each([
		'93.184.215.14',
		'172.32.0.1',
		'100.128.0.1',
		'2606:4700::6810:84e5',
		'::ffff:8.8.8.8',
		// Beside the translated ranges, not in them.
		'64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff',
		'64:ff9b:2::1',
		'::fffe:0:808:808',
	])('%s is public', (address) => {
		expect(internalReason(address)).toBeUndefined();
	});
});

describe('an allowance', () => {
	const url = (text: string) => new URL(text);

	it('allows what it names and nothing wider', () => {
		const allowance = parseAllowance(
			'dam.intranet, 10.0.0.5:8080\n fd00::/8, [::1]:3000, shop.lan:80',
		);
		expect(refusalOf(allowance, url('http://dam.intranet:9000/p.jpg'), '10.9.9.9')).toBeUndefined();
		expect(refusalOf(allowance, url('http://10.0.0.5:8080/p.jpg'), '10.0.0.5')).toBeUndefined();
		expect(refusalOf(allowance, url('http://10.0.0.5:8081/p.jpg'), '10.0.0.5')).toBe(
			'it leads to a private address',
		);
		expect(refusalOf(allowance, url('http://[fd00::7]/p.jpg'), 'fd00::7')).toBeUndefined();
		expect(refusalOf(allowance, url('http://[::1]:3000/p.jpg'), '::1')).toBeUndefined();
		expect(refusalOf(allowance, url('http://[::1]:3001/p.jpg'), '::1')).toBe(
			'it leads to a loopback address',
		);
		expect(refusalOf(allowance, url('http://shop.lan/p.jpg'), '192.168.1.2')).toBeUndefined();
		expect(refusalOf(allowance, url('http://shop.lan:8080/p.jpg'), '192.168.1.2')).toBe(
			'it leads to a private address',
		);
		expect(refusalOf(allowance, url('http://other.intranet/p.jpg'), '10.9.9.9')).toBe(
			'it leads to a private address',
		);
	});

	it('allows the translated ranges only where it names them', () => {
		const allowance = parseAllowance('64:ff9b::/96');
		const photo = url('http://[64:ff9b::a00:5]/p.jpg');
		expect(refusalOf(allowance, photo, '64:ff9b::a00:5')).toBeUndefined();
		expect(refusalOf(parseAllowance(''), photo, '64:ff9b::a00:5')).toBe(
			'it leads to a NAT64 address, translated to IPv4 inside the network',
		);
		expect(refusalOf(allowance, url('http://[64:ff9b:1::5]/p.jpg'), '64:ff9b:1::5')).toBe(
			'it leads to a local-use NAT64 address, translated to IPv4 inside the network',
		);
	});

	it.each(['0.0.0.0/0', '::/0', '/0', '10.0.0.0/0', '0/00'])(
		'refuses %s, which names every address',
		(entry) => {
			expect(() => parseAllowance(`shop.lan, ${entry}`)).toThrow(
				`"${entry}" names every address; name the hosts or networks inside your network that may be reached`,
			);
		},
	);

	it.each(['10.0.0.0/33', 'user@host', 'http://host/', 'host/path', '::1/200', '/8'])(
		'refuses %s',
		(entry) => {
			expect(() => parseAllowance(entry)).toThrow(`"${entry}" is not`);
		},
	);
});
