import { LT, GT, RSQB, DASH, QUESTION, BANG, QUOTE, APOSTROPHE, Bytes } from './bytes';
import type { Scanner } from './scanner';

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
	feed(buf: Uint8Array, i: number, end: number, scanner: Scanner): number {
		while (i < end) {
			const b = buf[i];
			if (b >= 0x80 || b < 0x20) {
				i = scanner.character(buf, i, end);
				if (scanner.problem) return end;
				continue;
			}
			i++;
			switch (this.state) {
				case DoctypeState.Outside:
					if (b === QUOTE || b === APOSTROPHE) {
						this.quote = b;
						this.state = DoctypeState.OutsideQuoted;
					} else if (b === 0x5b) {
						this.state = DoctypeState.Subset;
					} else if (b === GT) {
						this.done = true;
						return i;
					}
					break;
				case DoctypeState.OutsideQuoted:
					if (b === this.quote) this.state = DoctypeState.Outside;
					break;
				case DoctypeState.Subset:
					if (b === LT) this.state = DoctypeState.SubsetLt;
					else if (b === RSQB) this.state = DoctypeState.Outside;
					break;
				case DoctypeState.SubsetLt:
					if (b === BANG) this.state = DoctypeState.SubsetBang;
					else if (b === QUESTION) this.state = DoctypeState.Pi;
					else this.state = DoctypeState.Declaration;
					break;
				case DoctypeState.SubsetBang:
					this.state = b === DASH ? DoctypeState.SubsetBangDash : DoctypeState.Declaration;
					if (b === GT) this.state = DoctypeState.Subset;
					break;
				case DoctypeState.SubsetBangDash:
					this.state = b === DASH ? DoctypeState.Comment : DoctypeState.Declaration;
					break;
				case DoctypeState.Comment:
					if (b === DASH) this.state = DoctypeState.CommentDash;
					break;
				case DoctypeState.CommentDash:
					this.state = b === DASH ? DoctypeState.CommentDashes : DoctypeState.Comment;
					break;
				case DoctypeState.CommentDashes:
					if (b === GT) this.state = DoctypeState.Subset;
					else if (b !== DASH) this.state = DoctypeState.Comment;
					break;
				case DoctypeState.Pi:
					if (b === QUESTION) this.state = DoctypeState.PiQuestion;
					break;
				case DoctypeState.PiQuestion:
					if (b === GT) this.state = DoctypeState.Subset;
					else if (b !== QUESTION) this.state = DoctypeState.Pi;
					break;
				case DoctypeState.Declaration:
					if (b === QUOTE || b === APOSTROPHE) {
						this.quote = b;
						this.state = DoctypeState.DeclarationQuoted;
					} else if (b === GT) {
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
