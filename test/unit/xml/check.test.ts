import { checkXml, checkXmlStream, XmlWellFormednessChecker, type XmlProblem } from '../../../nodes/shared/xml/check';

const WELL_FORMED: string[] = [
	'<a/>',
	'<a>x</a>',
	'<?xml version="1.0" encoding="UTF-8"?>\n<Products>\n\t<Product id="1" kind=\'x\'>A &amp; B &lt; &gt; &quot; &apos;</Product>\n</Products>\n',
	'\uFEFF<?xml version="1.0"?><a/>',
	'<a><![CDATA[<not> & a ]] tag]]></a>',
	'<!-- before --><?pi data?><a><!----><!-- - --><?x?></a><!-- after -->\n',
	'<a b = "1"\n   c=\'>\' d="&#x41;&#65;" />',
	'<p:a xmlns:p="urn:x"><p:b/></p:a >',
	'<a>&#x1F600; æøå ÆØÅ 日本 😀</a>',
	'<!DOCTYPE a [\n<!ENTITY e "x">\n<!ENTITY f "]>">\n]>\n<a>&e;&f;</a>',
	'<!DOCTYPE a SYSTEM "products.dtd"><a>&anything;</a>',
	'<!DOCTYPE a><a/>',
	'<a>]] > ]></a>',
	'<a>\r\n\t</a>\r\n',
	'<_a-b.c d_e-f.g="1"/>',
];

const MALFORMED: Array<[string, XmlProblem]> = [
	['', { message: 'The document has no root element', line: 1, column: 1 }],
	['  \n <!-- only a comment -->', { message: 'The document has no root element', line: 2, column: 24 }],
	['<a>x', { message: "The element 'a' is never closed", line: 1, column: 1 }],
	['<a>\n  <b>\n</a>', { message: "Expected the closing tag 'b' (opened at line 2, column 3), found 'a'", line: 3, column: 1 }],
	['</a>', { message: "The closing tag 'a' has no opening tag", line: 1, column: 1 }],
	['<a/><b/>', { message: 'Only one root element is allowed', line: 1, column: 6 }],
	['text<a/>', { message: "Text is not allowed before the root element, found 't'", line: 1, column: 1 }],
	['<a/>\ntail', { message: "Text is not allowed after the root element, found 't'", line: 2, column: 1 }],
	['<a x=1/>', { message: "The value of the attribute 'x' must be in quotes", line: 1, column: 6 }],
	['<a x/>', { message: "The attribute 'x' has no value", line: 1, column: 5 }],
	['<a x="1" x="2"/>', { message: "The attribute 'x' is repeated", line: 1, column: 11 }],
	['<a x="1"y="2"/>', { message: "A space is needed before another attribute, found 'y'", line: 1, column: 9 }],
	['<a x="<"/>', { message: "'<' is not allowed in the value of the attribute 'x'", line: 1, column: 7 }],
	['<a>1 < 2</a>', { message: "'<' must start a tag, comment, CDATA section or processing instruction; found U+0020", line: 1, column: 7 }],
	['<1a/>', { message: "'<' must start a tag, comment, CDATA section or processing instruction; found '1'", line: 1, column: 2 }],
	['<a>Fish & Chips</a>', { message: "'&' must start an entity reference such as '&amp;'", line: 1, column: 9 }],
	['<a>&nbsp;</a>', { message: "The entity '&nbsp;' is not declared", line: 1, column: 4 }],
	['<a b="&c;"/>', { message: "The entity '&c;' is not declared", line: 1, column: 7 }],
	['<a>&#0;</a>', { message: "'&#0;' is not a valid character reference", line: 1, column: 4 }],
	['<a>&#xD800;</a>', { message: "'&#xD800;' is not a valid character reference", line: 1, column: 4 }],
	['<a>&#x;</a>', { message: "'&#x;' is not a valid character reference", line: 1, column: 4 }],
	['<a>&#12a;</a>', { message: "A character reference holds only digits, as in '&#65;' or '&#x41;'", line: 1, column: 4 }],
	['<a>&;</a>', { message: "'&' must start an entity reference such as '&amp;'", line: 1, column: 4 }],
	['<a>\u0001</a>', { message: 'The character U+0001 is not allowed in XML', line: 1, column: 4 }],
	['<a>]]></a>', { message: "']]>' is not allowed in text", line: 1, column: 6 }],
	['<a><!-- a -- b --></a>', { message: "'--' is not allowed inside a comment", line: 1, column: 13 }],
	['<a><!-- a ---></a>', { message: "'--' is not allowed inside a comment", line: 1, column: 13 }],
	['<a><!- x --></a>', { message: "'<!-' must be followed by '-' to start a comment", line: 1, column: 7 }],
	['<a><!ELEMENT x></a>', { message: "'<!' must start a comment, CDATA section or DOCTYPE, found '<!E'", line: 1, column: 6 }],
	['<![CDATA[x]]><a/>', { message: 'A CDATA section is only allowed inside the root element', line: 1, column: 9 }],
	['<a/><!DOCTYPE a>', { message: 'A DOCTYPE is only allowed once, before the root element', line: 1, column: 13 }],
	[' <?xml version="1.0"?><a/>', { message: 'The XML declaration is only allowed at the very start of the document', line: 1, column: 2 }],
	['<a><?xml version="1.0"?></a>', { message: 'The XML declaration is only allowed at the very start of the document', line: 1, column: 4 }],
	['<a', { message: 'The document ends inside a tag', line: 1, column: 1 }],
	['<a><!-- open', { message: 'The document ends inside a comment', line: 1, column: 4 }],
	['<a><![CDATA[ open', { message: 'The document ends inside a CDATA section', line: 1, column: 4 }],
	['<a b="open', { message: 'The document ends inside an attribute value', line: 1, column: 1 }],
	['<a/ >', { message: "'>' expected after '/' in a tag, found U+0020", line: 1, column: 4 }],
	['<a></a b>', { message: "'>' expected to end the closing tag 'a', found 'b'", line: 1, column: 8 }],
];

/** Feeds `bytes` in pieces of the given sizes, cycling through them. */
function checkInPieces(bytes: Buffer, sizes: number[]): XmlProblem | null {
	const checker = new XmlWellFormednessChecker();
	for (let offset = 0, step = 0; offset < bytes.length; step++) {
		const size = sizes[step % sizes.length];
		checker.write(bytes.subarray(offset, offset + size));
		offset += size;
	}
	return checker.end();
}

describe('XmlWellFormednessChecker', () => {
	it.each(WELL_FORMED)('accepts %j', (document) => {
		expect(checkXml(document)).toBeNull();
		expect(checkXml(Buffer.from(document))).toBeNull();
	});

	it.each(MALFORMED)('refuses %j', (document, problem) => {
		expect(checkXml(document)).toEqual(problem);
	});

	it('gives the same verdict whatever the chunks, even through multi-byte characters', () => {
		const documents = [...WELL_FORMED, ...MALFORMED.map(([document]) => document)].map((document) =>
			Buffer.from(`${document}`),
		);
		for (const bytes of documents) {
			const whole = checkXml(bytes);
			for (const sizes of [[1], [2, 3], [7], [300, 1]]) {
				expect(checkInPieces(bytes, sizes)).toEqual(whole);
			}
		}
	});

	it('counts lines and columns across chunks in a long document', () => {
		const lines = Array.from({ length: 5000 }, (_, index) => `  <Product n="${index}">æ ${index} &amp; 😀</Product>`);
		lines[4321] = '  <Product n="4321">æ 4321 & 😀</Product>';
		const bytes = Buffer.from(`<Products>\r\n${lines.join('\r\n')}\r\n</Products>`);

		const expected = { message: "'&' must start an entity reference such as '&amp;'", line: 4323, column: 28 };
		expect(checkXml(bytes)).toEqual(expected);
		expect(checkInPieces(bytes, [4096])).toEqual(expected);
		expect(checkInPieces(bytes, [1, 333, 65536])).toEqual(expected);
	});

	it('reads UTF-16 by its byte-order mark and single-byte encodings by the declaration', () => {
		const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<a>æøå</a>', 'utf16le')]);
		expect(checkXml(utf16)).toBeNull();
		const utf16Broken = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<a>æøå</b>', 'utf16le')]);
		expect(checkXml(utf16Broken)?.message).toBe("Expected the closing tag 'a' (opened at line 1, column 1), found 'b'");

		const latin1 = Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><a>\u00e6\u00f8\u00e5</a>', 'latin1');
		expect(checkXml(latin1)).toBeNull();
		expect(checkXml(Buffer.from('\uFEFF<a/>'))).toBeNull();
	});

	it('never expands entities: a nested entity bomb is checked in an instant', () => {
		const levels = Array.from({ length: 10 }, (_, level) =>
			level === 0 ? '<!ENTITY e0 "lol">' : `<!ENTITY e${level} "${`&e${level - 1};`.repeat(10)}">`,
		);
		expect(checkXml(`<!DOCTYPE a [${levels.join('')}]><a>&e9;</a>`)).toBeNull();
	});

	it('keeps the first problem and ignores what follows', () => {
		const checker = new XmlWellFormednessChecker();
		checker.write('<a>&bad;');
		const first = checker.problem;
		checker.write('</b>');
		expect(checker.end()).toEqual(first);
		expect(first?.message).toBe("The entity '&bad;' is not declared");
	});
});

describe('checkXmlStream', () => {
	it('hands every chunk to onChunk in order', async () => {
		const chunks = ['<a>', 'æ', '</a>'].map((text) => Buffer.from(text));
		const seen: Buffer[] = [];

		const problem = await checkXmlStream(
			(async function* () {
				yield* chunks;
			})(),
			(chunk) => seen.push(chunk),
		);

		expect(problem).toBeNull();
		expect(Buffer.concat(seen)).toEqual(Buffer.concat(chunks));
	});

	it('stops reading at the first problem', async () => {
		let pulled = 0;
		async function* source() {
			for (const text of ['<a>', '</b>', '<c/>', '<d/>']) {
				pulled++;
				yield Buffer.from(text.padEnd(300));
			}
		}

		const problem = await checkXmlStream(source());

		expect(problem?.message).toBe("Expected the closing tag 'a' (opened at line 1, column 1), found 'b'");
		expect(pulled).toBe(2);
	});
});
