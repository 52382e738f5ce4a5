/*
 * What a body is, judged by its first bytes rather than by what its host says: a shop that answers a
 * missing photo with its "not found" page and status 200 (a soft 404) calls that page whatever it
 * likes. The image formats are the ones photo hosts serve and image services take; the service's
 * interface names none, so SVG (an image written as XML) is left for the service to judge.
 */

const ascii = (bytes: Buffer, start: number, end: number) =>
	bytes.subarray(start, end).toString('latin1');

const FTYP_IMAGE_BRANDS = new Set(['avif', 'avis', 'heic', 'heix', 'hevc', 'hevx', 'mif1', 'msf1']);

const SIGNATURES: Array<[format: string, matches: (bytes: Buffer) => boolean]> = [
	['JPEG', (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff],
	['PNG', (b) => b.subarray(0, 8).equals(Buffer.from('89504e470d0a1a0a', 'hex'))],
	['GIF', (b) => ['GIF87a', 'GIF89a'].includes(ascii(b, 0, 6))],
	['WebP', (b) => ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP'],
	['TIFF', (b) => ['II*\0', 'MM\0*', 'II+\0', 'MM\0+'].includes(ascii(b, 0, 4))],
	['BMP', (b) => ascii(b, 0, 2) === 'BM'],
	['AVIF/HEIC', (b) => ascii(b, 4, 8) === 'ftyp' && FTYP_IMAGE_BRANDS.has(ascii(b, 8, 12))],
	['Photoshop', (b) => ascii(b, 0, 4) === '8BPS'],
	['JPEG 2000', (b) => b.subarray(0, 12).equals(Buffer.from('0000000c6a5020200d0a870a', 'hex'))],
];

/** The start of a text body, without a byte order mark or leading white space, lower-cased. */
function textStart(bytes: Buffer): string {
	return ascii(bytes, 0, 1024)
		.replace(/^\xef\xbb\xbf/, '')
		.trimStart()
		.toLowerCase();
}

/**
 * What the first bytes of a body are: `{ image }` with its format, or `{ notImage }` saying what
 * the body is instead, in words for an error message (e.g. "an HTML page").
 */
export function imageSignature(bytes: Buffer): { image: string } | { notImage: string } {
	for (const [format, matches] of SIGNATURES) if (matches(bytes)) return { image: format };
	const text = textStart(bytes);
	if (/^<(!doctype html|html|head|body)[\s>]/.test(text)) return { notImage: 'an HTML page' };
	if (text.startsWith('<') && text.includes('<svg')) return { image: 'SVG' };
	if (text.startsWith('<')) return { notImage: 'an XML or HTML document' };
	if (text.startsWith('{') || text.startsWith('[')) return { notImage: 'a JSON document' };
	if (text.startsWith('%pdf-')) return { notImage: 'a PDF document' };
	if (/^[\t\n\r\x20-\x7e]*$/.test(ascii(bytes, 0, 64))) return { notImage: 'text' };
	return { notImage: 'data of no image format' };
}
