import type { IExecuteFunctions } from 'n8n-workflow';

import { RunParameters } from '../runParameters';
import type { WaitOptions } from '../waiting';

export type XmlSource = 'binary' | 'text' | 'items';

/** The Options collection of an upload item. */
export interface UploadOptions extends WaitOptions {
	contentType?: string;
	failOnProcessingError?: boolean;
	waitForCompletion?: boolean;
	validate?: boolean;
}

/** What an upload run reads of its node's parameters: the source once, each item's Options once. */
export interface UploadSettings {
	source: XmlSource;
	/** The item's Options collection, evaluated on the first call for that item. */
	optionsOf(itemIndex: number): UploadOptions;
}

/**
 * Every read of the Options collection evaluates each of its expressions again, so a run reads it
 * once per item (through the run's parameters: once per run without an expression). A read that
 * fails is not kept: each use reports the item's error itself.
 */
export function uploadSettings(context: IExecuteFunctions): UploadSettings {
	const parameters = new RunParameters(context);
	const read = new Map<number, UploadOptions>();
	return {
		source: context.getNodeParameter('source', 0) as XmlSource,
		optionsOf(itemIndex) {
			let options = read.get(itemIndex);
			if (!options) {
				options = parameters.read('options', itemIndex, {}) as UploadOptions;
				read.set(itemIndex, options);
			}
			return options;
		},
	};
}
