/** Entity declarations, and the references inside literals (entity values and default values). */

import { isXmlName } from '../chars';
import type { DoctypeReader } from './doctypeReader';
import { characterReference, isPredefinedEntity } from './entities';

/** <!ENTITY name "value">, <!ENTITY name SYSTEM "uri" [NDATA notation]>, <!ENTITY % name ...>; 'ENTITY' and a space have been read. */
export function readEntityDeclaration(r: DoctypeReader): void {
	let parameter = false;
	if (r.at('%')) {
		r.pos++;
		r.requireSpace("after '%'");
		parameter = true;
	}
	const name = r.readName('an entity name');
	r.requireSpace('after the entity name');
	let value: string | null = null;
	let unparsed = false;
	const external = !(r.at('"') || r.at("'"));
	if (!external) {
		const offset = r.pos + 1;
		const literal = r.readQuoted('the entity value');
		value = checkLiteralReferences(r, literal, offset, true);
	} else {
		r.readExternalId(false);
		const spaced = r.skipSpace();
		if (r.at('NDATA')) {
			if (parameter) r.fail('A parameter entity cannot be unparsed (NDATA)');
			if (!spaced) r.unexpected("a space before 'NDATA'");
			r.pos += 5;
			r.requireSpace("after 'NDATA'");
			r.readName('a notation name');
			unparsed = true;
		}
	}
	// The first declaration of an entity is the one that counts.
	if (parameter) {
		if (!r.parameterEntities.has(name)) r.parameterEntities.set(name, value);
	} else if (!r.entities.has(name)) {
		r.entities.set(name, { value, external, unparsed });
	}
}

/**
 * Checks the references of a literal at `offset`: character references must name characters XML
 * allows, entity references must be well-formed names ending in ';', and parameter entity
 * references (entity values only) are not allowed in the internal subset. Returns the literal
 * with its character references replaced: the replacement text of an entity value; null when
 * that depends on a parameter entity (inside one), which is not expanded.
 */
export function checkLiteralReferences(
	r: DoctypeReader,
	value: string,
	offset: number,
	entityValue: boolean,
): string | null {
	let result = '';
	let k = 0;
	while (k < value.length) {
		const c = value[k];
		if (c === '%' && entityValue) {
			if (!r.inParameterEntity)
				r.fail(
					'A parameter entity reference is not allowed in an entity value of the internal subset',
					offset + k,
				);
			const end = value.indexOf(';', k);
			const name = end > k ? value.slice(k + 1, end) : '';
			if (!isXmlName(name))
				r.fail("'%' must start a parameter entity reference such as '%name;'", offset + k);
			return null;
		}
		if (c !== '&') {
			result += c;
			k++;
			continue;
		}
		const end = value.indexOf(';', k);
		if (end < 0) r.fail("'&' must start a reference such as '&amp;'", offset + k);
		const body = value.slice(k + 1, end);
		if (body.startsWith('#')) {
			const code = characterReference(body);
			if (code === null)
				r.fail(`'&${body};' is not a reference to a character XML allows`, offset + k);
			result += String.fromCodePoint(code);
		} else {
			if (!isXmlName(body)) r.fail("'&' must start a reference such as '&amp;'", offset + k);
			result += `&${body};`;
		}
		k = end + 1;
	}
	return result;
}

/** A default value (quoted, at `offset`) may refer only to general entities declared before it. */
export function checkDeclaredBefore(r: DoctypeReader, value: string, offset: number): void {
	if (r.undeclaredAllowed) return;
	for (const match of value.matchAll(/&([^#;][^;]*);/g)) {
		const name = match[1];
		if (!isPredefinedEntity(name) && !r.entities.has(name)) {
			r.fail(
				`The entity '&${name};' in a default value is not declared before it`,
				offset + 1 + (match.index ?? 0),
			);
		}
	}
}
