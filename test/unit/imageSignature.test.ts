import { imageSignature } from '../../nodes/ProductDataIntegration/actions/image/imageSignature';

const hex = (text: string) => Buffer.from(text, 'hex');
const text = (body: string) => Buffer.from(body, 'latin1');

describe('imageSignature', () => {
	it.each([
		['JPEG', hex('ffd8ffe000104a464946')],
		['PNG', hex('89504e470d0a1a0a0000000d49484452')],
		['GIF', text('GIF89a\x01\x00\x01\x00')],
		['WebP', text('RIFF\x24\x00\x00\x00WEBPVP8 ')],
		['TIFF', text('II*\x00\x08\x00\x00\x00')],
		['TIFF', text('MM\x00*\x00\x00\x00\x08')],
		['BMP', text('BM\x36\x00\x00\x00')],
		['AVIF/HEIC', text('\x00\x00\x00\x1cftypavif\x00\x00\x00\x00')],
		['AVIF/HEIC', text('\x00\x00\x00\x18ftypheic\x00\x00\x00\x00')],
		['Photoshop', text('8BPS\x00\x01')],
		['SVG', text('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"></svg>')],
	])('knows %s by its first bytes', (format, bytes) => {
		expect(imageSignature(bytes)).toEqual({ image: format });
	});

	it.each([
		['an HTML page', text('\xef\xbb\xbf  <!DOCTYPE html><html><body>Not found</body></html>')],
		['an HTML page', text('<html>\n<head>')],
		['an XML or HTML document', text('<?xml version="1.0"?><error>gone</error>')],
		['a JSON document', text('{"error":"not found"}')],
		['a PDF document', text('%PDF-1.7\n')],
		['text', text('Not Found\n')],
		['data of no image format', hex('00010203fefdfcfb')],
	])('says what a body that is not an image is: %s', (what, bytes) => {
		expect(imageSignature(bytes)).toEqual({ notImage: what });
	});
});
