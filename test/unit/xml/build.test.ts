import {
	buildXmlDocument,
	prepareItemForXml,
	XmlFieldError,
} from '../../../nodes/shared/xml/build';
import { isXmlName } from '../../../nodes/shared/xml/chars';
import { checkXml } from '../../../nodes/shared/xml/check';

describe('isXmlName', () => {
	it('tells XML names from others', () => {
		for (const name of ['a', 'Product', '_x', 'p:name', 'a-b.c1', 'æøå', '日本'])
			expect(isXmlName(name)).toBe(true);
		for (const name of ['', '1a', '-a', '.a', 'a b', 'a/b', 'a&b', '@a', '#text'])
			expect(isXmlName(name)).toBe(false);
	});
});

describe('building documents from items', () => {
	const build = (entries: unknown[], declaration = false) =>
		buildXmlDocument(
			entries.map((entry) => prepareItemForXml(entry, 'Product')),
			{ rootElement: 'Products', declaration },
		);

	it('writes one element per item with fields, attributes, text, lists and nested objects', () => {
		const xml = build([
			{
				'@id': 'a"<&',
				sku: 'A & B <1>',
				price: 9.5,
				active: true,
				empty: null,
				skipped: undefined,
				tags: ['x', 'y'],
				size: { w: 1 },
			},
			{ '#text': 'plain', '@lang': 'en' },
		]);

		expect(xml).toBe(
			[
				'<Products>',
				'\t<Product id="a&quot;&lt;&amp;">',
				'\t\t<sku>A &amp; B &lt;1&gt;</sku>',
				'\t\t<price>9.5</price>',
				'\t\t<active>true</active>',
				'\t\t<empty></empty>',
				'\t\t<tags>x</tags>',
				'\t\t<tags>y</tags>',
				'\t\t<size>',
				'\t\t\t<w>1</w>',
				'\t\t</size>',
				'\t</Product>',
				'\t<Product lang="en">plain</Product>',
				'</Products>',
				'',
			].join('\n'),
		);
		expect(checkXml(xml)).toBeNull();
	});

	it('starts with the XML declaration when asked', () => {
		const xml = build([{ sku: 'A' }], true);
		expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<Products>')).toBe(true);
		expect(checkXml(xml)).toBeNull();
	});

	it('writes dates as ISO 8601', () => {
		expect(build([{ at: new Date(0) }])).toContain('<at>1970-01-01T00:00:00.000Z</at>');
	});

	it.each([
		[{ 'bad name': 1 }, "The field name 'bad name' is not a valid XML element name", 'bad name'],
		[{ a: { '1x': 1 } }, "The field name '1x' is not a valid XML element name", 'a.1x'],
		[
			{ '@bad attr': 1 },
			"The field name '@bad attr' is not a valid XML attribute name",
			'@bad attr',
		],
		[{ '@id': { x: 1 } }, "The field '@id' becomes an attribute and must be a plain value", '@id'],
		[{ '#text': [1] }, "The field '#text' (element text) must be a plain value", '#text'],
		[
			{ list: [[1, 2]] },
			"The field 'list[0]' is a list inside a list, which has no XML form",
			'list',
		],
		[
			{ text: 'a\u0000b' },
			"The field 'text' holds the character U+0000, which XML cannot carry",
			'text',
		],
		[
			{ deep: [{ x: '\u001f' }] },
			"The field 'deep[0].x' holds the character U+001F, which XML cannot carry",
			'deep[0].x',
		],
	])('refuses %j, naming the field', (json, message, field) => {
		let thrown: unknown;
		try {
			prepareItemForXml(json, 'Product');
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(XmlFieldError);
		expect((thrown as XmlFieldError).message).toBe(message);
		expect((thrown as XmlFieldError).field).toBe(field);
	});
});

describe('building faithfully or not at all', () => {
	const item = (json: unknown) => prepareItemForXml(json, 'Product').xml;
	const refusal = (json: unknown): { message: string; field: string } => {
		try {
			prepareItemForXml(json, 'Product');
		} catch (error) {
			expect(error).toBeInstanceOf(XmlFieldError);
			return { message: (error as XmlFieldError).message, field: (error as XmlFieldError).field };
		}
		throw new Error('not refused');
	};

	it('keeps __proto__, constructor and other odd keys as data', () => {
		const json = JSON.parse(
			'{"__proto__": {"x": "1"}, "constructor": "c", "toString": 2, "hasOwnProperty": {"@a": "b"}}',
		) as object;
		const xml = item(json);
		expect(xml).toBe(
			'\t<Product>\n\t\t<__proto__>\n\t\t\t<x>1</x>\n\t\t</__proto__>\n\t\t<constructor>c</constructor>\n\t\t<toString>2</toString>\n\t\t<hasOwnProperty a="b"></hasOwnProperty>\n\t</Product>\n',
		);
		expect(checkXml(xml)).toBeNull();
	});

	it('escapes tab, line feed and carriage return in attributes, and carriage return in text', () => {
		const xml = item({ '@note': 'a\tb\nc\r\nd "q" <&>', text: 'x\r\ny\tz' });
		expect(xml).toBe(
			'\t<Product note="a&#9;b&#10;c&#13;&#10;d &quot;q&quot; &lt;&amp;&gt;">\n\t\t<text>x&#13;\ny\tz</text>\n\t</Product>\n',
		);
	});

	it('keeps characters outside the Basic Multilingual Plane', () => {
		expect(item({ '@e': '😀', t: '𝄞 æ' })).toBe(
			'\t<Product e="😀">\n\t\t<t>𝄞 æ</t>\n\t</Product>\n',
		);
	});

	it('writes declared namespace prefixes and refuses undeclared ones', () => {
		const xml = item({
			'@xmlns:g': 'urn:g',
			'g:price': { '@g:currency': 'EUR', '#text': 5 },
			'xml:lang': 'en',
		});
		expect(xml).toBe(
			'\t<Product xmlns:g="urn:g">\n\t\t<g:price g:currency="EUR">5</g:price>\n\t\t<xml:lang>en</xml:lang>\n\t</Product>\n',
		);
		expect(refusal({ 'g:price': 5 })).toEqual({
			message:
				"The element 'g:price' uses the namespace prefix 'g', which no '@xmlns:g' field declares on it or above it",
			field: 'g:price',
		});
		expect(refusal({ a: { '@h:x': 1 } })).toEqual({
			message:
				"The attribute 'h:x' uses the namespace prefix 'h', which no '@xmlns:h' field declares on it or above it",
			field: 'a.@h:x',
		});
		expect(prepareItemForXml({ '@xmlns:g': 'urn:g', sku: 'A' }, 'g:Product').xml).toBe(
			'\t<g:Product xmlns:g="urn:g">\n\t\t<sku>A</sku>\n\t</g:Product>\n',
		);
		expect(refusal({ '@xmlns:g': '' }).field).toBe('@xmlns:g');
		expect(refusal({ 'a:b:c': 1 }).message).toBe(
			"The field name 'a:b:c' is not a valid XML element name",
		);
		expect(refusal({ 'xmlns:a': 1 }).message).toBe(
			"The field name 'xmlns:a' uses the prefix 'xmlns', which only namespace declarations may use",
		);
	});

	it.each([
		[{ '': 1 }, "The field name '' is not a valid XML element name", ''],
		[{ '@': 1 }, "The field name '@' is not a valid XML attribute name", '@'],
		[{ '#comment': 'x' }, "The field name '#comment' is not a valid XML element name", '#comment'],
		[{ 'a\u00D7b': 1 }, "The field name 'a\u00D7b' is not a valid XML element name", 'a\u00D7b'],
		[
			{ s: 'a\uD800b' },
			"The field 's' holds a lone surrogate U+D800 (half of a character), which XML cannot carry",
			's',
		],
		[
			{ s: 'a\uDC00' },
			"The field 's' holds a lone surrogate U+DC00 (half of a character), which XML cannot carry",
			's',
		],
		[{ '@s': '\uFFFE' }, "The field '@s' holds the character U+FFFE, which XML cannot carry", '@s'],
		[{ s: '\u000B' }, "The field 's' holds the character U+000B, which XML cannot carry", 's'],
		[{ at: new Date(NaN) }, "The field 'at' holds an invalid date", 'at'],
		[{ f: () => 1 }, "The field 'f' has a value of type function, which has no XML form", 'f'],
	])('refuses %j with the field path', (json, message, field) => {
		expect(refusal(json)).toEqual({ message, field });
	});

	it('refuses an object that contains itself', () => {
		const json: Record<string, unknown> = { a: { b: {} } };
		(json.a as Record<string, Record<string, unknown>>).b.c = json.a;
		expect(refusal(json)).toEqual({
			message: "The field 'a.b.c' contains itself, which has no XML form",
			field: 'a.b.c',
		});
	});

	it('writes the same object twice when it is not its own ancestor', () => {
		const shared = { x: 1 };
		expect(checkXml(item({ a: shared, b: shared }))).toBeNull();
	});

	it('handles nesting deeper than the call stack allows', () => {
		const depth = 100_000;
		const json: Record<string, unknown> = {};
		let level = json;
		for (let k = 0; k < depth; k++) level = (level.n = {}) as Record<string, unknown>;
		level.leaf = 'x';

		const xml = item(json);

		expect(xml.split('<n>').length - 1).toBe(depth);
		expect(checkXml(xml)).toBeNull();
	});

	it('writes text next to child elements without indentation, so the text stays as it is', () => {
		expect(item({ p: { '#text': 'a', b: 'c' } })).toBe(
			'\t<Product>\n\t\t<p>a<b>c</b></p>\n\t</Product>\n',
		);
	});
});
