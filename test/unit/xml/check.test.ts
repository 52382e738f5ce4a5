import { setFlagsFromString } from 'v8';
import { runInNewContext } from 'vm';

import {
	checkXml,
	checkXmlStream,
	XmlWellFormednessChecker,
	type XmlProblem,
} from '../../../nodes/shared/xml/check';

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
	'<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n<a/>',
	"<?xml version = '1.0' ?><a/>",
	'<!DOCTYPE a [\n<!ELEMENT a (#PCDATA|b)*>\n<!ELEMENT b (c?,(d|e)+)*>\n<!ATTLIST a id ID #REQUIRED kind (x|y) "x" n NOTATION (png) #IMPLIED>\n<!NOTATION png PUBLIC "image/png">\n<!-- a comment -->\n<?pi in the subset?>\n<!ENTITY % p "<!ENTITY q \'&#60;b/&#62;\'>">\n%p;\n]>\n<a id="1">&q;</a>',
	'<!DOCTYPE a [<!ENTITY e "<b>&f;</b>"><!ENTITY f "x &amp; y">]><a x="&f;">&e;&e;</a>',
	'<a b\u00B7:c\u0300="1" \u00C0\u{10000}="2"/>',
];

const MALFORMED: Array<[string, XmlProblem]> = [
	['', { message: 'The document has no root element', line: 1, column: 1 }],
	[
		'  \n <!-- only a comment -->',
		{ message: 'The document has no root element', line: 2, column: 25 },
	],
	['<a>x', { message: "The element 'a' is never closed", line: 1, column: 1 }],
	[
		'<a>\n  <b>\n</a>',
		{
			message: "Expected the closing tag 'b' (opened at line 2, column 3), found 'a'",
			line: 3,
			column: 1,
		},
	],
	['</a>', { message: "The closing tag 'a' has no opening tag", line: 1, column: 1 }],
	['<a/><b/>', { message: 'Only one root element is allowed', line: 1, column: 5 }],
	[
		'text<a/>',
		{ message: "Text is not allowed before the root element, found 't'", line: 1, column: 1 },
	],
	[
		'<a/>\ntail',
		{ message: "Text is not allowed after the root element, found 't'", line: 2, column: 1 },
	],
	['<a x=1/>', { message: "The value of the attribute 'x' must be in quotes", line: 1, column: 6 }],
	['<a x/>', { message: "The attribute 'x' has no value", line: 1, column: 5 }],
	['<a x="1" x="2"/>', { message: "The attribute 'x' is repeated", line: 1, column: 11 }],
	[
		'<a x="1"y="2"/>',
		{ message: "A space is needed before another attribute, found 'y'", line: 1, column: 9 },
	],
	[
		'<a x="<"/>',
		{ message: "'<' is not allowed in the value of the attribute 'x'", line: 1, column: 7 },
	],
	[
		'<a>1 < 2</a>',
		{
			message:
				"'<' must start a tag, comment, CDATA section or processing instruction; found U+0020",
			line: 1,
			column: 7,
		},
	],
	[
		'<1a/>',
		{
			message: "'<' must start a tag, comment, CDATA section or processing instruction; found '1'",
			line: 1,
			column: 2,
		},
	],
	[
		'<a>Fish & Chips</a>',
		{ message: "'&' must start an entity reference such as '&amp;'", line: 1, column: 9 },
	],
	['<a>&nbsp;</a>', { message: "The entity '&nbsp;' is not declared", line: 1, column: 4 }],
	['<a b="&c;"/>', { message: "The entity '&c;' is not declared", line: 1, column: 7 }],
	[
		'<a>&#0;</a>',
		{ message: "'&#0;' refers to a character XML does not allow", line: 1, column: 4 },
	],
	[
		'<a>&#xD800;</a>',
		{ message: "'&#xD800;' refers to a character XML does not allow", line: 1, column: 4 },
	],
	[
		'<a>&#x;</a>',
		{
			message: "A character reference holds only digits, as in '&#65;' or '&#x41;'",
			line: 1,
			column: 4,
		},
	],
	[
		'<a>&#12a;</a>',
		{
			message: "A character reference holds only digits, as in '&#65;' or '&#x41;'",
			line: 1,
			column: 4,
		},
	],
	[
		'<a>&;</a>',
		{ message: "'&' must start an entity reference such as '&amp;'", line: 1, column: 4 },
	],
	['<a>\u0001</a>', { message: 'The character U+0001 is not allowed in XML', line: 1, column: 4 }],
	['<a>]]></a>', { message: "']]>' is not allowed in text", line: 1, column: 4 }],
	[
		'<a><!-- a -- b --></a>',
		{ message: "'--' is not allowed inside a comment", line: 1, column: 11 },
	],
	['<a><!-- a ---></a>', { message: "'--' is not allowed inside a comment", line: 1, column: 11 }],
	[
		'<a><!- x --></a>',
		{ message: "'<!-' must be followed by '-' to start a comment", line: 1, column: 7 },
	],
	[
		'<a><!ELEMENT x></a>',
		{
			message: "'<!' must start a comment, CDATA section or DOCTYPE, found '<!E'",
			line: 1,
			column: 6,
		},
	],
	[
		'<![CDATA[x]]><a/>',
		{ message: 'A CDATA section is only allowed inside the root element', line: 1, column: 1 },
	],
	[
		'<a/><!DOCTYPE a>',
		{ message: 'A DOCTYPE is only allowed once, before the root element', line: 1, column: 5 },
	],
	[
		' <?xml version="1.0"?><a/>',
		{
			message: 'The XML declaration is only allowed at the very start of the document',
			line: 1,
			column: 2,
		},
	],
	[
		'<a><?xml version="1.0"?></a>',
		{
			message: 'The XML declaration is only allowed at the very start of the document',
			line: 1,
			column: 4,
		},
	],
	['<a', { message: 'The document ends inside a tag', line: 1, column: 1 }],
	['<a><!-- open', { message: 'The document ends inside a comment', line: 1, column: 4 }],
	[
		'<a><![CDATA[ open',
		{ message: 'The document ends inside a CDATA section', line: 1, column: 4 },
	],
	['<a b="open', { message: 'The document ends inside an attribute value', line: 1, column: 1 }],
	['<a/ >', { message: "'>' expected after '/' in a tag, found U+0020", line: 1, column: 4 }],
	[
		'<a></a b>',
		{ message: "'>' expected to end the closing tag 'a', found 'b'", line: 1, column: 8 },
	],
	[
		'<?xml version="1.0" encoding="UTF-8" standalone="maybe"?><a/>',
		{ message: "standalone must be 'yes' or 'no', found 'maybe'", line: 1, column: 50 },
	],
	[
		'<?xml> version="1.0"?><a/>',
		{ message: 'A space is needed between the parts of the XML declaration', line: 1, column: 6 },
	],
	['<?xml?><a/>', { message: 'The XML declaration must give the version', line: 1, column: 6 }],
	['<?xml version="1."?><a/>', { message: "The XML version '1.' is not 1.x", line: 1, column: 16 }],
	[
		'<!DOCTYPEa><a/>',
		{
			message: "In the DOCTYPE, a space after 'DOCTYPE' is expected, found 'a'",
			line: 1,
			column: 10,
		},
	],
	[
		'<?xml VERSION="1.0"?><a/>',
		{
			message:
				"The XML declaration may hold only version, encoding and standalone, found 'VERSION'",
			line: 1,
			column: 7,
		},
	],
	[
		'<?xml version="1.0"encoding="UTF-8"?><a/>',
		{ message: 'A space is needed between the parts of the XML declaration', line: 1, column: 20 },
	],
	[
		'<!DOCTYPE a [<!ENTITY% e "x">]><a/>',
		{
			message: "In the DOCTYPE, a space after 'ENTITY' is expected, found '%'",
			line: 1,
			column: 22,
		},
	],
	[
		'<!DOCTYPE a [\n<!ELEMENT a (b|c,d)>\n]><a/>',
		{ message: "A content model group mixes '|' and ','", line: 2, column: 17 },
	],
	[
		'<!DOCTYPE a [<!ENTITY e "<b>">]><a>&e;</a>',
		{
			message: "In the entity '&e;': The element 'b' is not closed inside it",
			line: 1,
			column: 36,
		},
	],
	[
		'<!DOCTYPE a [<!ENTITY e "&e;">]><a>&e;</a>',
		{ message: "In the entity '&e;': The entity '&e;' refers to itself", line: 1, column: 36 },
	],
	[
		'<!DOCTYPE a [<!ENTITY e "&#60;">]><a b="&e;"/>',
		{
			message: "In the entity '&e;': '<' is not allowed in an attribute value",
			line: 1,
			column: 41,
		},
	],
	[
		'<!DOCTYPE a [<!ENTITY e SYSTEM "e.xml">]><a b="&e;"/>',
		{
			message: "The entity '&e;' is external and cannot be referenced in an attribute value",
			line: 1,
			column: 48,
		},
	],
	[
		'<a><?xml version="1.0"?></a>',
		{
			message: 'The XML declaration is only allowed at the very start of the document',
			line: 1,
			column: 4,
		},
	],
	[
		'<a><?XmL x?></a>',
		{ message: "The processing instruction target 'XmL' is reserved", line: 1, column: 4 },
	],
	[
		'<a>\u00A0\uFFFE</a>',
		{ message: 'The character U+FFFE is not allowed in XML', line: 1, column: 5 },
	],
	['<a\u00D7/>', { message: 'Unexpected U+00D7 in a tag', line: 1, column: 3 }],
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
		const lines = Array.from(
			{ length: 5000 },
			(_, index) => `  <Product n="${index}">æ ${index} &amp; 😀</Product>`,
		);
		lines[4321] = '  <Product n="4321">æ 4321 & 😀</Product>';
		const bytes = Buffer.from(`<Products>\r\n${lines.join('\r\n')}\r\n</Products>`);

		const expected = {
			message: "'&' must start an entity reference such as '&amp;'",
			line: 4323,
			column: 28,
		};
		expect(checkXml(bytes)).toEqual(expected);
		expect(checkInPieces(bytes, [4096])).toEqual(expected);
		expect(checkInPieces(bytes, [1, 333, 65536])).toEqual(expected);
	});

	it('reads UTF-16 by its byte-order mark and single-byte encodings by the declaration', () => {
		const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<a>æøå</a>', 'utf16le')]);
		expect(checkXml(utf16)).toBeNull();
		const utf16Broken = Buffer.concat([
			Buffer.from([0xff, 0xfe]),
			Buffer.from('<a>æøå</b>', 'utf16le'),
		]);
		expect(checkXml(utf16Broken)?.message).toBe(
			"Expected the closing tag 'a' (opened at line 1, column 1), found 'b'",
		);

		const latin1 = Buffer.from(
			'<?xml version="1.0" encoding="ISO-8859-1"?><a>\u00e6\u00f8\u00e5</a>',
			'latin1',
		);
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
		checker.write(`<a>${' '.repeat(20)}&bad;`);
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

		expect(problem?.message).toBe(
			"Expected the closing tag 'a' (opened at line 1, column 1), found 'b'",
		);
		expect(pulled).toBe(2);
	});
});

describe('encodings', () => {
	const bytes = (...parts: Array<string | number[]>) =>
		Buffer.concat(
			parts.map((part) =>
				typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part),
			),
		);

	it('refuses invalid UTF-8 with its line and column', () => {
		expect(checkXml(bytes('<a>\n  caf', [0xe9], '</a>'))).toEqual({
			message:
				'The byte 0xE9 is not valid UTF-8; if the file is in another encoding (e.g. Windows-1252), its XML declaration must say so',
			line: 2,
			column: 6,
		});
		expect(checkXml(bytes('<a b="', [0xc3, 0x28], '"/>'))?.message).toBe(
			'The byte 0xC3 is not valid UTF-8; if the file is in another encoding (e.g. Windows-1252), its XML declaration must say so',
		);
		// An overlong form and an encoded surrogate are not UTF-8 either.
		expect(checkXml(bytes('<a>', [0xc0, 0xbc], '</a>'))?.line).toBe(1);
		expect(checkXml(bytes('<a>', [0xed, 0xa0, 0x80], '</a>'))?.column).toBe(4);
		// A document cut inside a character.
		expect(checkXml(bytes('<a>x', [0xe6, 0x97]))?.message).toMatch(
			/^The bytes 0xE6 0x97 are not valid UTF-8/,
		);
	});

	it('reads Windows-1252 and ISO-8859-1 as declared', () => {
		const windows = bytes(
			'<?xml version="1.0" encoding="Windows-1252"?>\n<a>',
			[0x80, 0x93, 0x94, 0xe9],
			'</a>',
		);
		expect(checkXml(windows)).toBeNull();
		expect(
			checkXml(bytes('<?xml version="1.0" encoding="windows-1252"?>\n<a>', [0xe9], '</b>')),
		).toEqual({
			message: "Expected the closing tag 'a' (opened at line 2, column 1), found 'b'",
			line: 2,
			column: 5,
		});
		expect(
			checkXml(
				bytes(
					"<?xml version='1.0' encoding='ISO-8859-1'?><a \u00e6=\"\u00f8\">\u00e5",
					[0x85],
					'</a>',
				),
			),
		).toBeNull();
		expect(
			checkXml(bytes('<?xml version="1.0" encoding="latin1"?><a>', [0xd7], '</a>')),
		).toBeNull();
	});

	it('reads UTF-16 by its byte-order mark, little and big endian', () => {
		const text = '<?xml version="1.0" encoding="UTF-16"?>\n<a>æøå 😀</a>';
		const little = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
		const big = Buffer.from(little);
		big.swap16();
		expect(checkXml(little)).toBeNull();
		expect(checkXml(big)).toBeNull();
		const broken = Buffer.concat([
			Buffer.from([0xff, 0xfe]),
			Buffer.from('<a>\n æ</b>', 'utf16le'),
		]);
		expect(checkXml(broken)).toEqual({
			message: "Expected the closing tag 'a' (opened at line 1, column 1), found 'b'",
			line: 2,
			column: 3,
		});
		const loneSurrogate = Buffer.concat([
			Buffer.from([0xff, 0xfe]),
			Buffer.from('<a>', 'utf16le'),
			Buffer.from([0x00, 0xd8]),
			Buffer.from('</a>', 'utf16le'),
		]);
		expect(checkXml(loneSurrogate)?.message).toBe(
			'The bytes after this point are not valid UTF-16, the encoding the document declares',
		);
	});

	it('refuses an encoding it does not know, and declarations that contradict the bytes', () => {
		expect(checkXml('<?xml version="1.0" encoding="Shift_JIS"?><a/>')?.message).toBe(
			"The XML declaration says the encoding is 'Shift_JIS', which this check does not read (it reads UTF-8, UTF-16, ISO-8859-1, Windows-1252 and US-ASCII); save the document as UTF-8, or turn Validate Before Upload off",
		);
		expect(checkXml('\uFEFF<?xml version="1.0" encoding="ISO-8859-1"?><a/>')?.message).toBe(
			"The document starts with a UTF-8 byte-order mark but its XML declaration says the encoding is 'ISO-8859-1'",
		);
		expect(checkXml('<?xml version="1.0" encoding="UTF-16"?><a/>')?.message).toBe(
			"The XML declaration says the encoding is 'UTF-16', but the document has no byte-order mark and its bytes are not in that encoding",
		);
		expect(
			checkXml(bytes('<?xml version="1.0" encoding="US-ASCII"?>\n<a>caf', [0xe9], '</a>')),
		).toEqual({
			message: 'The byte 0xE9 is not US-ASCII, the encoding the XML declaration names',
			line: 2,
			column: 7,
		});
		expect(checkXml(Buffer.from('<a/>', 'utf16le'))?.message).toMatch(
			/^The document looks like UTF-16 or UTF-32 without a byte-order mark/,
		);
	});
});

/** Writes `depth` open elements with 12-character names, in 64 KB chunks of their own. */
function feedOpenElements(
	checker: XmlWellFormednessChecker,
	depth: number,
): Array<WeakRef<Buffer>> {
	const chunks: Array<WeakRef<Buffer>> = [];
	const open = '<element12345>'.repeat(depth);
	for (let offset = 0; offset < open.length; offset += 64 * 1024) {
		const chunk = Buffer.alloc(64 * 1024);
		const length = chunk.write(open.slice(offset, offset + 64 * 1024));
		chunks.push(new WeakRef(chunk));
		checker.write(chunk.subarray(0, length));
	}
	return chunks;
}

describe('pathological input', () => {
	/**
	 * Milliseconds of the fastest of five runs of each, taken in turn, each after a full garbage
	 * collection: the least disturbed by other work and by collecting the garbage of earlier runs.
	 */
	function fastest(...runs: Array<() => void>): number[] {
		setFlagsFromString('--expose_gc');
		const gc = runInNewContext('gc') as () => void;
		const best = runs.map(() => Infinity);
		for (let k = 0; k < 5; k++) {
			runs.forEach((run, index) => {
				gc();
				const start = process.hrtime.bigint();
				run();
				best[index] = Math.min(best[index], Number(process.hrtime.bigint() - start) / 1e6);
			});
		}
		return best;
	}

	it('takes time linear in the attributes of one tag', () => {
		const tag = (count: number) =>
			Buffer.from(
				`<a ${Array.from({ length: count }, (_, k) => `attribute${k}="${k}"`).join(' ')}/>`,
			);
		const small = tag(20_000);
		const large = tag(80_000);
		expect(checkXml(large)).toBeNull();
		expect(checkXml(Buffer.from(`<a ${'x="1" '.repeat(2)}/>`))?.message).toBe(
			"The attribute 'x' is repeated",
		);
		expect(
			checkXml(
				Buffer.concat([large.subarray(0, large.length - 2), Buffer.from(' attribute79999="x"/>')]),
			)?.message,
		).toBe("The attribute 'attribute79999' is repeated");

		const [smallTime, largeTime] = fastest(
			() => checkXml(small),
			() => checkXml(large),
		);
		const ratio = largeTime / smallTime;

		// Four times the attributes: about four times the time when linear, sixteen when quadratic;
		// the bound leaves room for a machine busy with other work.
		expect(ratio).toBeLessThan(12);
	});

	it('holds memory in proportion to the depth of the document, not to the chunks read', async () => {
		setFlagsFromString('--expose_gc');
		const gc = runInNewContext('gc') as () => void;
		const used = () => {
			gc();
			const { heapUsed, arrayBuffers } = process.memoryUsage();
			return heapUsed + arrayBuffers;
		};
		const before = used();
		const checker = new XmlWellFormednessChecker();
		// Fed from a function of its own: an async function's suspended frame could keep the last chunk.
		const chunks = feedOpenElements(checker, 40_000);
		// WeakRefs made in this turn of the event loop keep their targets until it ends.
		await new Promise((resolve) => setImmediate(resolve));
		gc();
		const retained = chunks.flatMap((chunk, index) => (chunk.deref() !== undefined ? [index] : []));

		expect(retained).toEqual([]);
		// 40 000 names of 12 bytes and their positions: well under 16 MB. A name kept as a slice of
		// its chunk keeps the whole chunk: hundreds of MB.
		expect((used() - before) / 2 ** 20).toBeLessThan(16);
		expect(checker.end()?.message).toBe("The element 'element12345' is never closed");
	});

	it('checks any depth without a stack overflow', () => {
		const depth = 1_000_000;
		expect(checkXml(`${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}`)).toBeNull();
		expect(checkXml(`${'<a>'.repeat(depth)}</b>`)?.message).toBe(
			`Expected the closing tag 'a' (opened at line 1, column ${3 * depth - 2}), found 'b'`,
		);

		const entities = Array.from(
			{ length: 10_000 },
			(_, k) => `<!ENTITY e${k} "${k === 0 ? 'x' : `&e${k - 1};`}">`,
		).join('');
		expect(checkXml(`<!DOCTYPE a [${entities}]><a>&e9999;</a>`)?.message).toMatch(
			/Entities are nested more than 64 deep/,
		);
		expect(
			checkXml(`<!DOCTYPE a [<!ELEMENT a ${'('.repeat(100_000)}b${')'.repeat(100_000)}>]><a/>`)
				?.message,
		).toBe('The content model nests more than 64 groups');
	});
});
