import type { INodeProperties } from 'n8n-workflow';

/** For every operation (and the trigger) that reports how an upload's processing ended. */
export const includeErrorMessageOption: INodeProperties = {
	displayName: 'Include Error Message',
	name: 'includeErrorMessage',
	type: 'boolean',
	default: false,
	description:
		'Whether to fetch the error message of an upload whose processing failed into errorMessage (one more request each), instead of giving only its URL',
};
