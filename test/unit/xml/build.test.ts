import { buildXmlDocument, prepareItemForXml, XmlFieldError } from '../../../nodes/shared/xml/build';
import { isXmlName } from '../../../nodes/shared/xml/chars';
import { checkXml } from '../../../nodes/shared/xml/check';

describe('isXmlName', () => {
	it('tells XML names from others', () => {
		for (const name of ['a', 'Product', '_x', 'p:name', 'a-b.c1', 'æøå', '日本']) expect(isXmlName(name)).toBe(true);
		for (const name of ['', '1a', '-a', '.a', 'a b', 'a/b', 'a&b', '@a', '#text']) expect(isXmlName(name)).toBe(false);
	});
});

describe('building documents from items', () => {
	const build = (entries: unknown[], declaration = false) =>
		buildXmlDocument(entries.map((entry) => prepareItemForXml(entry)), {
			rootElement: 'Products',
			itemElement: 'Product',
			declaration,
		});

	it('writes one element per item with fields, attributes, text, lists and nested objects', () => {
		const xml = build([
			{ '@id': 'a"<&', sku: 'A & B <1>', price: 9.5, active: true, empty: null, skipped: undefined, tags: ['x', 'y'], size: { w: 1 } },
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
		[{ '@bad attr': 1 }, "The field name '@bad attr' is not a valid XML attribute name", '@bad attr'],
		[{ '@id': { x: 1 } }, "The field '@id' becomes an attribute and must be a plain value", '@id'],
		[{ '#text': [1] }, "The field '#text' (element text) must be a plain value", '#text'],
		[{ list: [[1, 2]] }, "The field 'list[0]' is a list inside a list, which has no XML form", 'list'],
		[{ text: 'a\u0000b' }, "The field 'text' holds the character U+0000, which XML cannot carry", 'text'],
		[{ deep: [{ x: '\u001f' }] }, "The field 'deep[0].x' holds the character U+001F, which XML cannot carry", 'deep[0].x'],
	])('refuses %j, naming the field', (json, message, field) => {
		let thrown: unknown;
		try {
			prepareItemForXml(json);
		} catch (error) {
			thrown = error;
		}
		expect(thrown).toBeInstanceOf(XmlFieldError);
		expect((thrown as XmlFieldError).message).toBe(message);
		expect((thrown as XmlFieldError).field).toBe(field);
	});
});
