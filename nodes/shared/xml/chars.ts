/** Character classes of XML 1.0 (fifth edition), shared by the check and the builder. */

/** NameStartChar, for any code point. */
export function isNameStart(c: number): boolean {
	if (c < 0x80)
		return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a;
	return (
		(c >= 0xc0 && c <= 0xd6) ||
		(c >= 0xd8 && c <= 0xf6) ||
		(c >= 0xf8 && c <= 0x2ff) ||
		(c >= 0x370 && c <= 0x37d) ||
		(c >= 0x37f && c <= 0x1fff) ||
		c === 0x200c ||
		c === 0x200d ||
		(c >= 0x2070 && c <= 0x218f) ||
		(c >= 0x2c00 && c <= 0x2fef) ||
		(c >= 0x3001 && c <= 0xd7ff) ||
		(c >= 0xf900 && c <= 0xfdcf) ||
		(c >= 0xfdf0 && c <= 0xfffd) ||
		(c >= 0x10000 && c <= 0xeffff)
	);
}

/** NameChar, for any code point. */
export function isNameChar(c: number): boolean {
	return (
		isNameStart(c) ||
		(c >= 0x30 && c <= 0x39) ||
		c === 0x2d ||
		c === 0x2e ||
		c === 0xb7 ||
		(c >= 0x300 && c <= 0x36f) ||
		c === 0x203f ||
		c === 0x2040
	);
}

export function isSpace(c: number): boolean {
	return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;
}

/** Char: what a document may hold, directly or as a character reference. */
export function isXmlChar(c: number): boolean {
	return (
		(c >= 0x20 && c <= 0xd7ff) ||
		c === 0x0a ||
		c === 0x09 ||
		c === 0x0d ||
		(c >= 0xe000 && c <= 0xfffd) ||
		(c >= 0x10000 && c <= 0x10ffff)
	);
}

/** Whether `name` (a JavaScript string) is an XML Name. */
export function isXmlName(name: string): boolean {
	if (name.length === 0) return false;
	let first = true;
	for (const char of name) {
		const c = char.codePointAt(0) as number;
		if (first ? !isNameStart(c) : !isNameChar(c)) return false;
		first = false;
	}
	return true;
}

/** 'x' for a visible ASCII character, U+XXXX otherwise. */
export function describeChar(c: number): string {
	return c >= 0x21 && c < 0x7f
		? `'${String.fromCharCode(c)}'`
		: `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
}
