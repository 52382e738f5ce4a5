import type { IExecuteFunctions } from 'n8n-workflow';

import { customerOverrideOf } from '../../../shared/customer';
import type { CustomerOverride } from '../../../shared/transport';
import { RunParameters } from '../runParameters';
import { waitSettings, type WaitOptions, type WaitSettings } from '../waiting';

export type XmlSource = 'binary' | 'text' | 'items';

/** The Options collection of an upload item, as given: read only here, each value checked as it is read. */
interface UploadOptions extends WaitOptions {
	contentType?: string;
	failOnProcessingError?: boolean;
	waitForCompletion?: boolean;
	validate?: boolean;
	/** The Customer option as given (see customerOverrideOf). */
	customer?: unknown;
}

/**
 * What an upload run reads of its node's parameters: the source once, each item's Options once.
 * Each of an item's settings is checked where it is read, so its error names the item and the field.
 */
export interface UploadSettings {
	source: XmlSource;
	/** Validate Before Upload: on unless the item's Options turn it off. */
	validateOf(itemIndex: number): boolean;
	/** The customer node the item's Customer option picks (none: the credential's). */
	customerOf(itemIndex: number): CustomerOverride | undefined;
	/** The Content-Type the item's document is sent with. */
	contentTypeOf(itemIndex: number): string;
	/** How the item's session is awaited: with Wait for Completion, or `alwaysWait`; else none. */
	waitOf(itemIndex: number, alwaysWait: boolean): WaitSettings | undefined;
	/** Whether a session whose processing failed fails its item (Fail on Processing Error). */
	failOnProcessingErrorOf(itemIndex: number): boolean;
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
	const customerOf = (itemIndex: number) =>
		customerOverrideOf(context, itemIndex, optionsOf(itemIndex).customer ?? null);
	return {
		source: context.getNodeParameter('source', 0) as XmlSource,
		validateOf: (itemIndex) => {
			const { validate = true } = optionsOf(itemIndex);
			return Boolean(validate);
		},
		customerOf,
		contentTypeOf: (itemIndex) => optionsOf(itemIndex).contentType || 'application/xml',
		waitOf: (itemIndex, alwaysWait) => {
			const options = optionsOf(itemIndex);
			return options.waitForCompletion || alwaysWait
				? waitSettings(context, itemIndex, options, customerOf(itemIndex))
				: undefined;
		},
		failOnProcessingErrorOf: (itemIndex) => Boolean(optionsOf(itemIndex).failOnProcessingError),
	};
}
