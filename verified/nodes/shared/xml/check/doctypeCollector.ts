import { Byte, Bytes } from './bytes';

/** What the collector asks of the scan it serves (scanContext.ts): the check of single characters. */
export interface CharacterCheck {
	/** Returns the index after the character at `buf[i]`, or `end` with `problem` set. */
	character(buf: Uint8Array, i: number, end: number): number;
	readonly problem: unknown;
}

const enum DoctypeState {
	Outside,
	OutsideQuoted,
	Subset,
	SubsetLt,
	SubsetBang,
	SubsetBangDash,
	Comment,
	CommentDash,
	CommentDashes,
	Pi,
	PiQuestion,
	Declaration,
	DeclarationQuoted,
}

/**
 * Finds where a DOCTYPE ends (quotes, comments and processing instructions may hold '>' and ']'),
 * checking its characters on the way. The DOCTYPE itself is read once whole, by `readDoctype`.
 */
export class DoctypeCollector {
	readonly bytes = new Bytes();
	done = false;
	private state = DoctypeState.Outside;
	private quote = 0;

	constructor(
		readonly line: number,
		readonly column: number,
	) {}

	/** Returns the index after the DOCTYPE's '>', or `end`. */
	feed(buf: Uint8Array, i: number, end: number, s: CharacterCheck): number {
		while (i < end) {
			const b = buf[i];
			if (b >= 0x80 || b < 0x20) {
				i = s.character(buf, i, end);
				if (s.problem) return end;
				continue;
			}
			i++;
			switch (this.state) {
				case DoctypeState.Outside:
					if (b === Byte.Quote || b === Byte.Apostrophe) {
						this.quote = b;
						this.state = DoctypeState.OutsideQuoted;
					} else if (b === Byte.LeftBracket) {
						this.state = DoctypeState.Subset;
					} else if (b === Byte.Gt) {
						this.done = true;
						return i;
					}
					break;
				case DoctypeState.OutsideQuoted:
					if (b === this.quote) this.state = DoctypeState.Outside;
					break;
				case DoctypeState.Subset:
					if (b === Byte.Lt) this.state = DoctypeState.SubsetLt;
					else if (b === Byte.RightBracket) this.state = DoctypeState.Outside;
					break;
				case DoctypeState.SubsetLt:
					if (b === Byte.Bang) this.state = DoctypeState.SubsetBang;
					else if (b === Byte.Question) this.state = DoctypeState.Pi;
					else this.state = DoctypeState.Declaration;
					break;
				case DoctypeState.SubsetBang:
					this.state = b === Byte.Dash ? DoctypeState.SubsetBangDash : DoctypeState.Declaration;
					if (b === Byte.Gt) this.state = DoctypeState.Subset;
					break;
				case DoctypeState.SubsetBangDash:
					this.state = b === Byte.Dash ? DoctypeState.Comment : DoctypeState.Declaration;
					break;
				case DoctypeState.Comment:
					if (b === Byte.Dash) this.state = DoctypeState.CommentDash;
					break;
				case DoctypeState.CommentDash:
					this.state = b === Byte.Dash ? DoctypeState.CommentDashes : DoctypeState.Comment;
					break;
				case DoctypeState.CommentDashes:
					if (b === Byte.Gt) this.state = DoctypeState.Subset;
					else if (b !== Byte.Dash) this.state = DoctypeState.Comment;
					break;
				case DoctypeState.Pi:
					if (b === Byte.Question) this.state = DoctypeState.PiQuestion;
					break;
				case DoctypeState.PiQuestion:
					if (b === Byte.Gt) this.state = DoctypeState.Subset;
					else if (b !== Byte.Question) this.state = DoctypeState.Pi;
					break;
				case DoctypeState.Declaration:
					if (b === Byte.Quote || b === Byte.Apostrophe) {
						this.quote = b;
						this.state = DoctypeState.DeclarationQuoted;
					} else if (b === Byte.Gt) {
						this.state = DoctypeState.Subset;
					}
					break;
				case DoctypeState.DeclarationQuoted:
					if (b === this.quote) this.state = DoctypeState.Declaration;
					break;
			}
		}
		return end;
	}
}
