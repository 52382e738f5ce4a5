/** Character references ('&#65;', '&#x41;') and entity references ('&name;') in text and attribute values. */

import { isXmlChar } from '../chars';
import { Byte, type Bytes, startsWith } from './bytes';
import { PREDEFINED_ENTITIES } from './entities';
import type { ScanContext } from './scanContext';
import { State } from './states';

const PREDEFINED_NAMES = PREDEFINED_ENTITIES.map((name) => Buffer.from(name));

/** The index after '&amp;', '&lt;', '&gt;', '&quot;' or '&apos;' at `buf[i]`, or 0. */
export function predefinedReference(buf: Uint8Array, i: number, end: number): number {
	for (const name of PREDEFINED_NAMES) {
		const semicolon = i + 1 + name.length;
		if (semicolon < end && buf[semicolon] === Byte.Semicolon && startsWith(buf, i + 1, end, name))
			return semicolon + 1;
	}
	return 0;
}

/** '&' at `buf[i]`, in text or in an attribute value. */
export function startReference(s: ScanContext, i: number, inAttribute: boolean): void {
	s.mark(i);
	s.referenceInAttribute = inAttribute;
	s.state = State.Reference;
}

/** The byte-at-a-time states of a reference after its '&'. */
export function referenceStep(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	const b = buf[i];
	switch (s.state) {
		case State.Reference:
			if (b === Byte.Hash) {
				s.state = State.CharRefStart;
				return true;
			}
			if (!s.isNameStartAt(buf, i, end))
				return s.problem
					? false
					: !s.failAtMark("'&' must start an entity reference such as '&amp;'");
			s.scratch.length = 0;
			s.state = State.EntityName;
			s.nextIndex = i;
			return true;
		case State.CharRefStart:
			s.charRefValue = 0;
			s.charRefDigits = 0;
			if (b === 0x78) {
				s.state = State.CharRefHex;
				return true;
			}
			s.state = State.CharRefDecimal;
			s.nextIndex = i;
			return true;
		default:
			return characterReferenceByte(s, b);
	}
}

/** A byte of a character reference after '&#' or '&#x': a digit, or the ';' that ends it. */
function characterReferenceByte(s: ScanContext, b: number): boolean {
	const hex = s.state === State.CharRefHex;
	if (b === Byte.Semicolon && s.charRefDigits > 0) {
		const value = s.charRefValue;
		if (!isXmlChar(value)) {
			return !s.failAtMark(
				`'&#${hex ? 'x' : ''}${hex ? value.toString(16).toUpperCase() : value};' refers to a character XML does not allow`,
			);
		}
		referenceEnded(s);
		return true;
	}
	let digit: number;
	if (b >= 0x30 && b <= 0x39) digit = b - 0x30;
	else if (hex && b >= 0x61 && b <= 0x66) digit = b - 0x57;
	else if (hex && b >= 0x41 && b <= 0x46) digit = b - 0x37;
	else return !s.failAtMark("A character reference holds only digits, as in '&#65;' or '&#x41;'");
	// Anything above the last code point is as wrong as the last code point plus one.
	s.charRefValue = Math.min(s.charRefValue * (hex ? 16 : 10) + digit, 0x110000);
	s.charRefDigits++;
	return true;
}

/**
 * The entity name in `scratch` has ended before the byte `b`: only ';' may end it. The ';' is
 * then read as part of the text or attribute value, where it is an ordinary byte.
 */
export function entityNameEnded(s: ScanContext, b: number): boolean {
	if (b !== Byte.Semicolon)
		return !s.failAtMark("'&' must start an entity reference such as '&amp;'");
	// A predefined entity is recognised from its bytes: no string for the most frequent references.
	if (!isPredefinedName(s.scratch)) {
		const name = s.scratch.text();
		const problem = s.referenceInAttribute
			? s.resolver.attributeProblem(name)
			: s.resolver.contentProblem(name);
		if (problem) return !s.failAtMark(problem);
	}
	referenceEnded(s);
	return true;
}

function referenceEnded(s: ScanContext): void {
	s.state = s.referenceInAttribute ? State.AttrValue : State.Text;
}

function isPredefinedName(name: Bytes): boolean {
	for (const entity of PREDEFINED_NAMES) {
		if (entity.length !== name.length) continue;
		let same = true;
		for (let k = 0; same && k < entity.length; k++) same = entity[k] === name.data[k];
		if (same) return true;
	}
	return false;
}
