/** The scanner's states: where in the markup the byte it reads next is. */
export const enum State {
	Misc,
	Text,
	TextBrackets,
	Lt,
	Bang,
	Comment,
	CommentDash,
	CommentDashes,
	CData,
	CDataBrackets,
	PiTarget,
	PiSpace,
	PiBody,
	PiQuestion,
	Declaration,
	DeclarationQuestion,
	Doctype,
	StartName,
	InTag,
	AttrName,
	AfterAttrName,
	BeforeAttrValue,
	AttrValue,
	AfterAttrValue,
	EmptyEnd,
	EndName,
	AfterEndName,
	Reference,
	EntityName,
	CharRefStart,
	CharRefDecimal,
	CharRefHex,
}

/** Where the scanner is relative to the root element. */
export const enum Where {
	Prolog,
	Root,
	Epilog,
}

/** What a scanner checks: a whole document, or the replacement text of an entity met in content. */
export const enum ScanMode {
	Document,
	Content,
}
