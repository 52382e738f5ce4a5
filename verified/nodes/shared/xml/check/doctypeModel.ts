/** What a DOCTYPE declares, as the rest of the check reads it: types only, so every part can import them. */

/** A general entity declared in the DOCTYPE. */
export interface EntityDeclaration {
	/** Replacement text of an internal entity; null when not known (external ones are never read). */
	value: string | null;
	external: boolean;
	/** An unparsed entity (NDATA): never referenced in text or attribute values. */
	unparsed: boolean;
}

export interface Doctype {
	entities: Map<string, EntityDeclaration>;
	/**
	 * Whether a reference to an undeclared entity is allowed: the DTD has an external subset or a
	 * parameter entity reference, which this check never reads, and the document is not standalone.
	 */
	undeclaredAllowed: boolean;
	/** Default attribute values, checked against the entities once the whole DTD is known. */
	defaults: Array<{ value: string; offset: number }>;
}

export type DoctypeResult = { doctype: Doctype } | { problem: { message: string; offset: number } };
