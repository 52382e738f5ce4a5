import FormData from 'form-data';

import {
	multipartBoundary,
	MultipartError,
	parseMultipart,
} from '../../../scripts/emulator/multipart';

describe('multipartBoundary', () => {
	it.each([
		['multipart/form-data; boundary=abc', 'abc'],
		['Multipart/Form-Data;boundary="a b:c"', 'a b:c'],
		['multipart/form-data; charset=utf-8; BOUNDARY=xyz', 'xyz'],
	])('reads %s', (header, boundary) => {
		expect(multipartBoundary(header)).toBe(boundary);
	});

	it.each([
		undefined,
		'application/json',
		'multipart/form-data',
		'multipart/mixed; boundary=abc',
		`multipart/form-data; boundary=${'x'.repeat(71)}`,
	])('finds no boundary in %s', (header) => {
		expect(multipartBoundary(header)).toBeNull();
	});
});

describe('parseMultipart', () => {
	const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'latin1');

	it('splits parts, skipping preamble and epilogue, with binary data kept byte for byte', () => {
		// CRLF, dashes and the boundary text, but never CRLF + "--b": that would end the part.
		const binary = Buffer.from([
			0x00, 0x0d, 0x0a, 0x2d, 0x2d, 0x63, 0x2d, 0x2d, 0x62, 0x0d, 0x0a, 0xff,
		]);
		const body = Buffer.concat([
			crlf([
				'preamble to ignore',
				'--b',
				'Content-Disposition: form-data; name="file"; filename="one.bin"',
				'Content-Type: image/png',
				'',
				'',
			]),
			binary,
			crlf([
				'',
				'--b  ',
				'Content-Disposition: form-data; name="note"',
				'',
				'hello',
				'--b',
				'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'bl%C3%A5.jpg',
				'',
				'',
			]),
			crlf(['', '--b--', 'epilogue']),
		]);
		const parts = parseMultipart(body, 'b');
		expect(parts.map((p) => [p.name, p.fileName, p.contentType])).toEqual([
			['file', 'one.bin', 'image/png'],
			['note', null, null],
			['file', 'blå.jpg', null],
		]);
		expect(parts[0].data.equals(binary)).toBe(true);
		expect(parts[1].data.toString()).toBe('hello');
		expect(parts[2].data).toHaveLength(0);
	});

	it('reads what the form-data package produces', () => {
		const form = new FormData();
		const image = Buffer.alloc(70_000, 7);
		form.append('file', image, { filename: 'a "quoted" name.png', contentType: 'image/png' });
		form.append('file', Buffer.from('second'), { filename: 'b.png' });
		const parts = parseMultipart(form.getBuffer(), form.getBoundary());
		expect(parts.map((p) => p.name)).toEqual(['file', 'file']);
		expect(parts[0].data.equals(image)).toBe(true);
		expect(parts[1].data.toString()).toBe('second');
		expect(parts[0].contentType).toBe('image/png');
	});

	it.each([
		['no boundary at all', crlf(['nothing here'])],
		[
			'a body that never closes',
			crlf(['--b', 'Content-Disposition: form-data; name="file"', '', 'data']),
		],
		['a delimiter not followed by CRLF', crlf(['--bX', '', 'data', '--b--'])],
		['headers that never end', crlf(['--b', 'Content-Disposition: form-data; name="file"'])],
		['a malformed header line', crlf(['--b', 'no colon here', '', 'data', '--b--'])],
	])('rejects %s', (_name, body) => {
		expect(() => parseMultipart(body, 'b')).toThrow(MultipartError);
	});

	it('accepts a part without headers', () => {
		const parts = parseMultipart(crlf(['--b', '', 'data', '--b--']), 'b');
		expect(parts).toEqual([expect.objectContaining({ name: null, data: Buffer.from('data') })]);
	});
});
