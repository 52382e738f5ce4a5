/**
 * The names the main loop reads (element, attribute, closing tag, processing instruction target,
 * entity): where their bytes go, how long they may be, and what their end means.
 */

import type { Bytes } from './bytes';
import { piTargetEnded } from './markup';
import { entityNameEnded } from './references';
import type { ScanContext } from './scanContext';
import { State } from './states';
import { attributeStart, tagNameEnded } from './tags';

const MAX_NAME_BYTES = 64 * 1024;

/** A closing tag or processing instruction without a name. */
export function failNoName(s: ScanContext, buf: Uint8Array, i: number, end: number): boolean {
	if (s.state === State.EndName)
		return s.fail(`An element name is expected after '</', found ${s.describeAt(buf, i, end)}`, i);
	return s.fail(
		`A processing instruction needs a target name, found ${s.describeAt(buf, i, end)}`,
		i,
	);
}

/** Where the name being read goes: the open elements, the tag's attributes, or `scratch`. */
export function nameBytes(s: ScanContext): Bytes {
	switch (s.state) {
		case State.StartName:
			return s.stack;
		case State.AttrName:
			return s.attributes;
		default:
			return s.scratch;
	}
}

export function nameLengthOk(s: ScanContext): boolean {
	const bytes = nameBytes(s);
	const start =
		s.state === State.StartName
			? s.stackEnds[s.stackEnds.length - 1]
			: s.state === State.AttrName
				? attributeStart(s)
				: 0;
	if (bytes.length - start <= MAX_NAME_BYTES) return true;
	return s.fail(`A name is longer than ${MAX_NAME_BYTES} bytes`, 0);
}

/** The name that was being read ends before `buf[i]`, where the main loop goes on. */
export function endName(s: ScanContext, buf: Uint8Array, i: number): boolean {
	switch (s.state) {
		case State.StartName:
		case State.AttrName:
		case State.EndName:
			tagNameEnded(s);
			return true;
		case State.PiTarget:
			return piTargetEnded(s);
		default:
			return entityNameEnded(s, buf[i]);
	}
}
