/** Character classes of XML 1.0 (fifth edition), shared by the check and the builder. */

export function isNameStart(c: number): boolean {
	return (
		(c >= 0x61 && c <= 0x7a) ||
		(c >= 0x41 && c <= 0x5a) ||
		c === 0x5f ||
		c === 0x3a ||
		(c >= 0xc0 && c !== 0xd7 && c !== 0xf7 && !(c >= 0x2000 && c <= 0x206f && c !== 0x200c && c !== 0x200d))
	);
}

export function isNameChar(c: number): boolean {
	return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0xb7 || (c >= 0x300 && c <= 0x36f) || c === 0x203f || c === 0x2040;
}

export function isDigit(c: number): boolean {
	return c >= 0x30 && c <= 0x39;
}

export function isSpace(c: number): boolean {
	return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;
}

/** Whether `name` is an XML name (element, attribute, entity). */
export function isXmlName(name: string): boolean {
	if (name.length === 0 || !isNameStart(name.charCodeAt(0))) return false;
	for (let i = 1; i < name.length; i++) if (!isNameChar(name.charCodeAt(i))) return false;
	return true;
}

/** Characters XML 1.0 cannot carry, not even as a character reference. */
export function isForbiddenChar(c: number): boolean {
	return (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0xfffe || c === 0xffff;
}

export function isAllowedCodePoint(cp: number): boolean {
	return (
		cp === 0x09 ||
		cp === 0x0a ||
		cp === 0x0d ||
		(cp >= 0x20 && cp <= 0xd7ff) ||
		(cp >= 0xe000 && cp <= 0xfffd) ||
		(cp >= 0x10000 && cp <= 0x10ffff)
	);
}

export function describeChar(c: number): string {
	return c >= 0x21 && c < 0x7f ? `'${String.fromCharCode(c)}'` : `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
}
