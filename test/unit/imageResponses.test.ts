import {
	parseFindAnswer,
	parseUploadAnswer,
} from '../../nodes/ProductDataIntegration/actions/image/responses';

const A = '0a1b2c3d4e5f60718293a4b5c6d7e8f9';
const B = 'f9e8d7c6b5a4938271605f4e3d2c1b0a';

describe('parseUploadAnswer', () => {
	it.each<[string, unknown]>([
		['objects with hashcode', JSON.stringify([{ hashcode: A }, { hashcode: B }])],
		['objects with hashCode', JSON.stringify([{ hashCode: A }, { hashCode: B }])],
		['objects with hash', JSON.stringify([{ hash: A }, { hash: B }])],
		['objects with id only', JSON.stringify([{ id: A }, { id: B }])],
		['strings', JSON.stringify([A, B])],
		['object with hashcodes', JSON.stringify({ hashcodes: [A, B] })],
		['object with images', JSON.stringify({ images: [{ hashcode: A }, { hashcode: B }] })],
		['lines', `${A}\n${B}\n`],
		['CRLF lines', `${A}\r\n${B}`],
		['comma-separated', `${A}, ${B}`],
		['a JSON string holding lines', JSON.stringify(`${A}\n${B}`)],
		['already parsed array', [{ hashcode: A }, B]],
		['a buffer', Buffer.from(`${A}\n${B}`)],
	])('reads %s in order', (_layout, body) => {
		expect(parseUploadAnswer(body)?.map((entry) => entry.hashcode)).toEqual([A, B]);
	});

	it('prefers the hashcode field over an id and keeps the md5 the service reports', () => {
		expect(parseUploadAnswer(JSON.stringify([{ id: 7, hashcode: A, MD5: 'ABC' }]))).toEqual([
			{ hashcode: A, md5: 'abc' },
		]);
	});

	it('reads a single object and a single line', () => {
		expect(parseUploadAnswer(JSON.stringify({ hashcode: A }))).toEqual([{ hashcode: A }]);
		expect(parseUploadAnswer(`  ${A}  `)).toEqual([{ hashcode: A }]);
	});

	it('reads an empty body as no hashcodes', () => {
		expect(parseUploadAnswer('')).toEqual([]);
		expect(parseUploadAnswer(undefined)).toEqual([]);
	});

	it.each<[string, unknown]>([
		['a sentence', 'Images uploaded successfully'],
		['HTML', '<html><body>OK</body></html>'],
		['broken JSON', '[{"hashcode": '],
		['an object without hashcodes', JSON.stringify({ status: 'ok' })],
		['a boolean', 'true'],
	])('gives up on %s', (_layout, body) => {
		expect(parseUploadAnswer(body)).toBeUndefined();
	});

	it('takes hashcodes of 1 to 128 characters, base64 included, and nothing longer', () => {
		const longest = 'h'.repeat(128);
		expect(
			parseUploadAnswer(JSON.stringify([longest, 'ab/cd+ef==', 'x']))?.map(
				(entry) => entry.hashcode,
			),
		).toEqual([longest, 'ab/cd+ef==', 'x']);
		expect(parseUploadAnswer('h'.repeat(129))).toBeUndefined();
		expect(parseUploadAnswer(JSON.stringify({ hashcode: 'h'.repeat(1_000_000) }))).toBeUndefined();
	});

	it.each(['x/../../auth/me', 'a/./b', 'a/..', 'a/.', 'a//..'])(
		'refuses %j, whose dot segment would name a folder in a path',
		(hashcode) => {
			expect(parseUploadAnswer(JSON.stringify([hashcode]))?.[0].hashcode).toBeUndefined();
			expect(parseUploadAnswer(hashcode)).toBeUndefined();
		},
	);

	it('marks an entry of a list without a usable hashcode, keeping the others in their places', () => {
		expect(
			parseUploadAnswer(
				JSON.stringify([{ hashcode: A }, { name: 'x' }, { hashcode: '<html>' }, null, B]),
			),
		).toEqual([
			{ hashcode: A },
			{ unusable: '{"name":"x"}' },
			{ unusable: '{"hashcode":"<html>"}' },
			{ unusable: 'null' },
			{ hashcode: B },
		]);
	});

	it('shows at most 100 characters of an unusable entry, on one line', () => {
		const [entry] = parseUploadAnswer(JSON.stringify([`${'x'.repeat(500_000)}\nforged`])) ?? [];
		expect(entry.hashcode).toBeUndefined();
		expect('unusable' in entry && entry.unusable.length).toBe(100);
	});

	it('keeps the md5 the service reports short and on one line', () => {
		const [entry] =
			parseUploadAnswer(
				JSON.stringify([{ hashcode: A, md5: `${'F'.repeat(10_000)}\n2026-01-01 ERROR forged` }]),
			) ?? [];
		expect(entry.hashcode).toBe(A);
		expect(entry.md5?.length).toBeLessThanOrEqual(64);
		expect(entry.md5).not.toMatch(/[\r\n]/);
		expect(entry.md5?.startsWith('f'.repeat(32))).toBe(true);
	});
});

describe('parseFindAnswer', () => {
	it.each<[string, string]>([
		['text', A],
		['text with a newline', `${A}\r\n`],
		['a JSON string', JSON.stringify(A)],
		['an object', JSON.stringify({ hashcode: A })],
		['an object with HashCode', JSON.stringify({ HashCode: A })],
		['an array of one', JSON.stringify([A])],
	])('reads %s', (_layout, body) => {
		expect(parseFindAnswer(body)).toBe(A);
	});

	it('gives up on more than one hashcode or on prose', () => {
		expect(parseFindAnswer(`${A}\n${B}`)).toBeUndefined();
		expect(parseFindAnswer('Image found')).toBeUndefined();
		expect(parseFindAnswer('')).toBeUndefined();
	});
});
