import type { IExecuteFunctions } from 'n8n-workflow';

import { customerOverrideOf } from '../../../shared/customer';
import type { CustomerOverride } from '../../../shared/transport';
import { RunParameters } from '../runParameters';
import type { WaitOptions } from '../waiting';

export type XmlSource = 'binary' | 'text' | 'items';

/** The Options collection of an upload item. */
export interface UploadOptions extends WaitOptions {
	contentType?: string;
	failOnProcessingError?: boolean;
	waitForCompletion?: boolean;
	validate?: boolean;
	/** The Customer option as given (see customerOverrideOf). */
	customer?: unknown;
}

/** What an upload run reads of its node's parameters: the source once, each item's Options once. */
export interface UploadSettings {
	source: XmlSource;
	/** The item's Options collection, evaluated on the first call for that item. */
	optionsOf(itemIndex: number): UploadOptions;
	/** The customer node the item's Customer option picks (none: the credential's), from those Options. */
	customerOf(itemIndex: number): CustomerOverride | undefined;
}

/**
 * Every read of the Options collection evaluates each of its expressions again, so a run reads it
 * once per item (through the run's parameters: once per run without an expression). A read that
 * fails is not kept: each use reports the item's error itself.
 */
export function uploadSettings(context: IExecuteFunctions): UploadSettings {
	const parameters = new RunParameters(context);
	const read = new Map<number, UploadOptions>();
	const optionsOf = (itemIndex: number): UploadOptions => {
		let options = read.get(itemIndex);
		if (!options) {
			options = parameters.read('options', itemIndex, {}) as UploadOptions;
			read.set(itemIndex, options);
		}
		return options;
	};
	return {
		source: context.getNodeParameter('source', 0) as XmlSource,
		optionsOf,
		customerOf: (itemIndex) =>
			customerOverrideOf(context, itemIndex, optionsOf(itemIndex).customer ?? null),
	};
}
