import { createHash } from 'node:crypto';

import { encodeMultipart as fullEncoder } from '../../nodes/shared/fullEdition/streamedMultipart';
import type { FilePart } from '../../nodes/shared/ports';
import { digestOf, encodeMultipart } from '../../nodes/shared/ports/inMemoryMultipart';
import { multipartBoundary, parseMultipart } from '../../scripts/emulator/multipart';

/** A part whose bytes are `data`, counting how often they are read. */
function part(filename: string, contentType: string, data: Buffer): FilePart & { reads: number } {
	const result = {
		name: 'file',
		filename,
		contentType,
		size: data.length,
		reads: 0,
		read: async () => {
			result.reads++;
			return data;
		},
	};
	return result;
}

function md5(data: Buffer): string {
	return createHash('md5').update(data).digest('hex');
}

/** The parts of an encoded body as the emulator's parser reads them. */
async function parsed(upload: ReturnType<typeof encodeMultipart>) {
	const boundary = multipartBoundary(String(upload.headers['content-type']));
	expect(boundary).not.toBeNull();
	return parseMultipart((await upload.body()) as Buffer, boundary as string);
}

describe("the verified edition's multipart encoder", () => {
	// Bytes that look like framing: CRLF, a delimiter's dashes, a NUL, every byte value.
	const tricky = Buffer.concat([
		Buffer.from('\r\n--\r\n\r\n--x--\0'),
		Buffer.from(Array.from({ length: 256 }, (_, n) => n)),
	]);

	it('encodes each part with its field name, file name, content type and bytes, as a multipart parser reads them', async () => {
		const parts = [
			part('front.jpg', 'image/jpeg', tricky),
			part('back side.png', 'image/png', Buffer.alloc(0)),
			part('détail.tiff', 'image/tiff; charset="binary"', Buffer.from('tiff bytes')),
		];
		const read = await parsed(encodeMultipart(parts));
		expect(
			read.map(({ name, fileName, contentType, data }) => ({
				name,
				fileName,
				contentType,
				data: Buffer.from(data),
			})),
		).toEqual([
			{ name: 'file', fileName: 'front.jpg', contentType: 'image/jpeg', data: tricky },
			{ name: 'file', fileName: 'back side.png', contentType: 'image/png', data: Buffer.alloc(0) },
			{
				name: 'file',
				fileName: 'détail.tiff',
				contentType: 'image/tiff; charset="binary"',
				data: Buffer.from('tiff bytes'),
			},
		]);
	});

	it("encodes the same body when the parts' sizes are not known beforehand, or are wrong", async () => {
		const expected = [
			{ fileName: 'a.jpg', data: tricky },
			{ fileName: 'b.jpg', data: Buffer.from('b') },
		];
		for (const sizes of [
			[undefined, undefined],
			[tricky.length, 5],
		]) {
			const parts = expected.map(({ fileName, data }, n) => ({
				...part(fileName, 'image/jpeg', data),
				size: sizes[n],
			}));
			const read = await parsed(encodeMultipart(parts));
			expect(read.map(({ fileName, data }) => ({ fileName, data: Buffer.from(data) }))).toEqual(
				expected,
			);
		}
	});

	it('percent-encodes quotes and line breaks in a file name, as browsers do, so that it cannot end its header', async () => {
		const read = await parsed(
			encodeMultipart([part('a"b\r\nContent-Type: text/html.jpg', 'image/jpeg', tricky)]),
		);
		expect(read).toHaveLength(1);
		expect(read[0].fileName).toBe('a%22b%0D%0AContent-Type: text/html.jpg');
		expect(read[0].contentType).toBe('image/jpeg');
	});

	it('refuses a content type that would add header lines', async () => {
		await expect(
			encodeMultipart([part('a.jpg', 'image/jpeg\r\nX-Injected: 1', tricky)]).body(),
		).rejects.toThrow('holds control characters');
	});

	it('tells what it sent of each part, and sends the same body again without reading the parts again', async () => {
		const parts = [
			part('a.jpg', 'image/jpeg', tricky),
			part('b.jpg', 'image/jpeg', Buffer.from('b')),
		];
		const upload = encodeMultipart(parts);
		const first = await upload.body();
		expect(await upload.body()).toBe(first);
		expect(parts.map((entry) => entry.reads)).toEqual([1, 1]);
		expect(upload.digests()).toEqual([
			{ md5: md5(tricky), bytes: tricky.length },
			{ md5: md5(Buffer.from('b')), bytes: 1 },
		]);
	});

	it('uses a new boundary for every body', () => {
		const first = encodeMultipart([]).headers['content-type'];
		expect(encodeMultipart([]).headers['content-type']).not.toBe(first);
	});

	it('measures a part by reading it', async () => {
		expect(await digestOf(part('a.jpg', 'image/jpeg', tricky))).toEqual({
			md5: md5(tricky),
			bytes: tricky.length,
		});
	});
});

describe.each([
	['the verified edition', encodeMultipart],
	['the full edition', fullEncoder],
])("%s's multipart encoder and control characters", (_edition, encode) => {
	it.each([
		'image/jpeg; name="a\0b"',
		'image/jpeg; name="a\vb"',
		'image/jpeg\x7f',
		'image/jpeg\r\nX-Injected: 1',
	])('refuses the content type %j before any of it is sent', async (contentType) => {
		await expect(encode([part('a.jpg', contentType, Buffer.from('bytes'))]).body()).rejects.toThrow(
			'The content type of a.jpg holds control characters',
		);
	});
});
