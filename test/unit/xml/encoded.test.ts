import {
	ENCODED_HEAD_BYTES,
	findXmlEncodedField,
	isXmlEncodedDocument,
} from '../../../nodes/shared/xml/encoded';

describe('isXmlEncodedDocument', () => {
	it.each([
		['&lt;Products&gt;&lt;/Products&gt;'],
		['&lt;?xml version=&quot;1.0&quot;?&gt;&lt;Products/&gt;'],
		['&lt;!-- export --&gt;&lt;Products/&gt;'],
		['\uFEFF\r\n\t &lt;Products/&gt;'],
		['&#60;Products/&#62;'],
		['&#x3C;Products/&#x3E;'],
		['&LT;Products&GT;'],
		['&lt;_private/&gt;'],
		['&lt;Produkte&gt;'],
	])('recognises %j', (document) => {
		expect(isXmlEncodedDocument(document)).toBe(true);
		expect(isXmlEncodedDocument(Buffer.from(document))).toBe(true);
	});

	it.each([
		['<Products><Name>&lt;b&gt;bold&lt;/b&gt;</Name></Products>'],
		['<?xml version="1.0"?>\n<!-- &lt;Products&gt; -->\n<Products/>'],
		['<![CDATA[&lt;Products&gt;]]>'],
		['&lt; 5 products'],
		['&lt;'],
		['&amp;lt;Products&amp;gt;'],
		['text &lt;Products&gt;'],
		[''],
	])('does not take %j for an encoded document', (document) => {
		expect(isXmlEncodedDocument(document)).toBe(false);
	});

	it('decides on the first bytes only', () => {
		const padded = `${' '.repeat(ENCODED_HEAD_BYTES)}&lt;Products/&gt;`;
		expect(isXmlEncodedDocument(padded)).toBe(false);
	});
});

describe('findXmlEncodedField', () => {
	it('names the path of a field holding an encoded document with its declaration', () => {
		expect(
			findXmlEncodedField({
				sku: 'A',
				body: '  &lt;?xml version=&quot;1.0&quot;?&gt;&lt;Products/&gt;',
			}),
		).toBe('body');
		expect(findXmlEncodedField({ parts: [{ x: 1 }, { xml: '&#60;?xml version="1.0"?>' }] })).toBe(
			'parts[1].xml',
		);
	});

	it('leaves escaped markup in fields alone: it is text', () => {
		expect(
			findXmlEncodedField({
				description: '&lt;p&gt;Oak&lt;/p&gt;',
				fragment: '&lt;Products&gt;&lt;/Products&gt;',
				note: 'see &lt;?xml in the manual',
				declarationWord: '&lt;?xml-stylesheet href="a.xsl"?&gt;',
				when: new Date(0),
				count: 3,
				none: null,
			}),
		).toBeNull();
	});
});

describe('findXmlEncodedField at any depth', () => {
	it('walks an item nested deeper than the call stack allows', () => {
		const json: Record<string, unknown> = {};
		let level = json;
		for (let depth = 0; depth < 100_000; depth++) level = (level.n = {}) as Record<string, unknown>;
		expect(findXmlEncodedField(json)).toBeNull();
		level.xml = '&lt;?xml version="1.0"?>';
		expect(findXmlEncodedField(json)?.endsWith('.n.xml')).toBe(true);
	});
});
