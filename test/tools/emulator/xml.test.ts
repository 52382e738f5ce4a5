import { analyseDocument, decodeDocument } from '../../../scripts/emulator/xml';

const analyse = (xml: string, environment: 'production' | 'test' = 'production') =>
	analyseDocument(xml, environment, null);

describe('analyseDocument', () => {
	it('reads the markers from comments only', () => {
		expect(analyse('<a><!-- emulator:fail --></a>')).toMatchObject({
			failMarker: true,
			processingMs: null,
		});
		expect(analyse('<a><!--emulator:processing-ms=250--></a>')).toMatchObject({
			failMarker: false,
			processingMs: 250,
		});
		expect(analyse('<a>emulator:fail <![CDATA[<!--emulator:fail-->]]></a>')).toMatchObject({
			failMarker: false,
		});
		expect(analyse('<a><!--emulator:processing-ms=abc--></a>').processingMs).toBeNull();
	});

	it('finds image URLs in text, attributes, CDATA and image elements', () => {
		const { imageUris } = analyse(`<?xml version="1.0"?>
			<!DOCTYPE catalogue [ <!ENTITY shop "Shop"> ]>
			<c:Catalogue xmlns:c="urn:c" logo='http://cdn.example.com/logo.svg'>
				<c:ProductImage>https://img.example.com/p?id=1&amp;size=2</c:ProductImage>
				<Text>Photo: https://cdn.example.com/a.jpeg, manual: https://cdn.example.com/a.pdf</Text>
				<Raw><![CDATA[https://cdn.example.com/b.GIF]]></Raw>
				<!-- https://cdn.example.com/commented.png -->
				<ImageUrl>not a url</ImageUrl>
				<Other>https://cdn.example.com/no-extension</Other>
			</c:Catalogue>`);
		expect(imageUris.sort()).toEqual(
			[
				'http://cdn.example.com/logo.svg',
				'https://img.example.com/p?id=1&size=2',
				'https://cdn.example.com/a.jpeg',
				'https://cdn.example.com/b.GIF',
			].sort(),
		);
	});

	it('reports each image URL once', () => {
		expect(
			analyse('<a><b>https://x.example/i.png</b><b>https://x.example/i.png</b></a>').imageUris,
		).toEqual(['https://x.example/i.png']);
	});

	it('does not take markup inside attribute values for tags', () => {
		expect(analyse('<a title="x > y / z"><b/></a>').notWellFormed).toBeNull();
	});

	it.each([
		['', 'The document is empty.'],
		['<a><b></a>', expect.stringContaining('line 1')],
		['<a/><b/>', 'The document must have exactly one root element.'],
	])('reports %j as not well-formed', (xml, reason) => {
		expect(analyse(xml).notWellFormed).toEqual(reason);
	});

	it('checks product identifiers only in the test environment', () => {
		const xml =
			'<Products><Product><Name>x</Name></Product><Product id=""/><Product><Gtin>1</Gtin></Product></Products>';
		expect(analyse(xml).validationErrors).toEqual([]);
		const errors = analyse(xml, 'test').validationErrors;
		expect(errors.map((e) => [e.code, e.element, e.line])).toEqual([
			['MissingIdentifier', 'Product', 1],
			['MissingIdentifier', 'Product', 1],
		]);
	});

	it('does not accept an identifier of a nested element for the product', () => {
		const xml = '<Products><Product><Variant><Sku>1</Sku></Variant></Product></Products>';
		expect(analyse(xml, 'test').validationErrors).toHaveLength(1);
	});

	it('caps the number of reported errors', () => {
		const xml = `<Products>${'<Product/>'.repeat(150)}</Products>`;
		const errors = analyse(xml, 'test').validationErrors;
		expect(errors).toHaveLength(101);
		expect(errors[100]).toEqual({
			code: 'TooManyErrors',
			message: '50 further errors were not reported.',
		});
	});

	it('reports an encoding problem in the test environment only', () => {
		expect(analyseDocument('<a/>', 'test', 'not UTF-8').validationErrors).toEqual([
			{ code: 'InvalidEncoding', message: 'not UTF-8' },
		]);
		expect(analyseDocument('<a/>', 'production', 'not UTF-8').validationErrors).toEqual([]);
	});
});

describe('decodeDocument', () => {
	it('reads UTF-8 with and without a BOM', () => {
		expect(decodeDocument(Buffer.from('<a>ø</a>'))).toEqual({
			text: '<a>ø</a>',
			encoding: 'utf-8',
			encodingProblem: null,
		});
		const bom = decodeDocument(
			Buffer.concat([
				Buffer.from([0xef, 0xbb, 0xbf]),
				Buffer.from('<?xml version="1.0" encoding="utf-8"?><a/>'),
			]),
		);
		expect(bom.encodingProblem).toBeNull();
	});

	it('decodes a declared single-byte encoding and names the problem', () => {
		const decoded = decodeDocument(
			Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>\u00f8</a>', 'latin1'),
		);
		expect(decoded.text).toContain('<a>ø</a>');
		expect(decoded.encodingProblem).toContain('iso-8859-1');
	});

	it('decodes UTF-16 by its byte-order mark', () => {
		const body = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<a>ø</a>', 'utf16le')]);
		const decoded = decodeDocument(body);
		expect(decoded.text).toBe('<a>ø</a>');
		expect(decoded.encodingProblem).toContain('UTF-16');
	});

	it('flags bytes that are not UTF-8', () => {
		expect(
			decodeDocument(Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0x3c, 0x2f, 0x61, 0x3e])).encodingProblem,
		).toContain('not valid UTF-8');
	});
});
