import { isXmlChar } from '../chars';
import type { Doctype } from './doctypeModel';

/** The entities every document may use without declaring them. */
export const PREDEFINED_ENTITIES: readonly string[] = ['amp', 'lt', 'gt', 'quot', 'apos'];
const PREDEFINED = new Set(PREDEFINED_ENTITIES);
const MAX_NESTING = 64;
const CHECKING = Symbol('checking');

export function isPredefinedEntity(name: string): boolean {
	return PREDEFINED.has(name);
}

/** Checks the replacement text of an entity met in content; returns its first problem's message. */
export type ContentCheck = (text: string, resolver: EntityResolver) => string | null;

/**
 * Decides whether an entity reference is well-formed where it occurs. Each entity's replacement
 * text is checked once (in text as content, in attribute values for '<'); nothing is expanded
 * into the document, so an entity bomb costs no more than its declarations.
 */
export class EntityResolver {
	private readonly contentVerdicts = new Map<string, string | null | typeof CHECKING>();
	private readonly attributeVerdicts = new Map<string, string | null | typeof CHECKING>();
	private nesting = 0;

	constructor(
		private readonly doctype: Doctype | null,
		private readonly checkContent: ContentCheck,
	) {}

	/** A resolver for the entities `doctype` declares, checking content as this one does. */
	withDoctype(doctype: Doctype): EntityResolver {
		return new EntityResolver(doctype, this.checkContent);
	}

	/** Why `&name;` is not allowed in text, or null. */
	contentProblem(name: string): string | null {
		if (isPredefinedEntity(name)) return null;
		const entity = this.doctype?.entities.get(name);
		if (!entity) return this.undeclared(name);
		if (entity.unparsed)
			return `The entity '&${name};' is unparsed (NDATA) and cannot be referenced in text`;
		if (entity.value === null) return null;
		return this.verdict(this.contentVerdicts, name, () => {
			const problem = this.checkContent(entity.value as string, this);
			return problem && `In the entity '&${name};': ${problem}`;
		});
	}

	/** Why `&name;` is not allowed in an attribute value, or null. */
	attributeProblem(name: string): string | null {
		if (isPredefinedEntity(name)) return null;
		const entity = this.doctype?.entities.get(name);
		if (!entity) return this.undeclared(name);
		if (entity.unparsed)
			return `The entity '&${name};' is unparsed (NDATA) and cannot be referenced in an attribute value`;
		if (entity.external)
			return `The entity '&${name};' is external and cannot be referenced in an attribute value`;
		if (entity.value === null) return null;
		return this.verdict(this.attributeVerdicts, name, () => {
			const problem = this.attributeValueProblem(entity.value as string);
			return problem && `In the entity '&${name};': ${problem}`;
		});
	}

	/** Why a literal attribute value (e.g. a DTD default) is not allowed, or null. */
	attributeValueProblem(value: string): string | null {
		for (let k = 0; k < value.length; k++) {
			const c = value[k];
			if (c === '<') return "'<' is not allowed in an attribute value";
			if (c !== '&') continue;
			const end = value.indexOf(';', k);
			const body = end < 0 ? '' : value.slice(k + 1, end);
			if (body.startsWith('#')) {
				if (characterReference(body) === null)
					return `'&${body};' is not a reference to a character XML allows`;
			} else {
				if (body === '') return "'&' must start an entity reference such as '&amp;'";
				const problem = this.attributeProblem(body);
				if (problem) return problem;
			}
			k = end;
		}
		return null;
	}

	private undeclared(name: string): string | null {
		return this.doctype?.undeclaredAllowed ? null : `The entity '&${name};' is not declared`;
	}

	private verdict(
		verdicts: Map<string, string | null | typeof CHECKING>,
		name: string,
		check: () => string | null,
	): string | null {
		const known = verdicts.get(name);
		if (known === CHECKING) return `The entity '&${name};' refers to itself`;
		if (known !== undefined) return known;
		if (this.nesting >= MAX_NESTING)
			return `Entities are nested more than ${MAX_NESTING} deep at '&${name};'`;
		verdicts.set(name, CHECKING);
		this.nesting++;
		let result: string | null;
		try {
			result = check();
		} finally {
			this.nesting--;
		}
		verdicts.set(name, result);
		return result;
	}
}

/** The code point of a character reference's body ('#65', '#x41'), or null when it is not valid. */
export function characterReference(body: string): number | null {
	const hex = body.startsWith('#x');
	const digits = body.slice(hex ? 2 : 1);
	if (!(hex ? /^[0-9a-fA-F]+$/ : /^[0-9]+$/).test(digits)) return null;
	const code = digits.length > 8 ? Infinity : parseInt(digits, hex ? 16 : 10);
	return isXmlChar(code) ? code : null;
}
