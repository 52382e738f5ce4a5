import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

/** Where an image's result goes: its input item, and its place among the item's images. */
export interface OutputPlace {
	itemIndex: number;
	position: number;
}

/** What is written to an item's output: one image's result, or the failure that replaces them all. */
export type ItemOutput =
	| { position: number; result: IDataObject }
	| { failure: INodeExecutionData };

/** One input item on its way: its images' results as they come, or the output item of its failure. */
interface ItemSlot {
	results: IDataObject[];
	failure?: INodeExecutionData;
}

/**
 * The output of every input item of an Image Upload run. Each stage that answers an image or fails
 * an item writes here through `write`, and nowhere else: an item's output is what `write` made it.
 */
export class Outputs {
	private readonly slots: ItemSlot[];

	constructor(itemCount: number) {
		this.slots = Array.from({ length: itemCount }, () => ({ results: [] }));
	}

	/** The one write of an item's output; an item keeps its first failure. */
	write(itemIndex: number, output: ItemOutput): void {
		const slot = this.slots[itemIndex];
		if ('failure' in output) slot.failure ??= output.failure;
		else slot.results[output.position] = output.result;
	}

	resultAt({ itemIndex, position }: OutputPlace): IDataObject | undefined {
		return this.slots[itemIndex].results[position];
	}

	hasFailed(itemIndex: number): boolean {
		return this.slots[itemIndex].failure !== undefined;
	}

	/** The item's images that reached the service (or were looked up) before it failed. */
	uploadedOf(itemIndex: number): IDataObject[] {
		return this.slots[itemIndex].results.filter((result) => typeof result.hashcode === 'string');
	}

	/** The hashcodes the run got from the service so far, for the error that stops it. */
	listUploaded(): string {
		const lines = this.slots.flatMap((slot, itemIndex) =>
			slot.results
				.filter((result) => typeof result.hashcode === 'string' && result.known === undefined)
				.map(
					(result) =>
						`${itemIndex} ${String(result.binaryProperty ?? result.url)} (MD5 ${String(result.md5)}) -> ${String(result.hashcode)}`,
				),
		);
		return lines.length > 0
			? `Already uploaded or looked up in this run (input item, binary field -> hashcode): ${lines.join('; ')}`
			: 'No image of this run was uploaded.';
	}

	/** The node's output items: a failed item's failure, else one item per image, in input order. */
	items(): INodeExecutionData[] {
		return this.slots.flatMap((slot, itemIndex) =>
			slot.failure
				? [slot.failure]
				: slot.results.map((json) => ({ json, pairedItem: { item: itemIndex } })),
		);
	}
}
