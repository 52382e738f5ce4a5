import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { DEFAULT_TERMS, type BucketTerms } from '../throttle';

/** A numeric field of the credential: its name in the editor, its range, and whether it takes fractions. */
export interface NumberField {
	name: string;
	displayName: string;
	min: number;
	max: number;
	wholeNumber?: boolean;
	default: number;
}

export const REQUEST_TIMEOUT_FIELD: NumberField = {
	name: 'requestTimeoutSeconds',
	displayName: 'Request Timeout (Seconds)',
	min: 1,
	// An hour is longer than any answer of the service takes; far beyond, a timer cannot hold it.
	max: 3600,
	default: 60,
};

export const BUCKET_CAPACITY_FIELD: NumberField = {
	name: 'bucketCapacity',
	displayName: 'Bucket Capacity',
	min: 1,
	max: 10_000,
	wholeNumber: true,
	default: DEFAULT_TERMS.capacity,
};

export const LEAK_INTERVAL_FIELD: NumberField = {
	name: 'leakIntervalSeconds',
	displayName: 'Leak Interval (Seconds)',
	min: 0.001,
	// Beyond 15 minutes, every request after the first burst would wait longer than a request waits.
	max: 900,
	default: DEFAULT_TERMS.intervalMs / 1000,
};

/**
 * A numeric setting of the credential, checked where it is read: empty is its default, anything
 * outside its range fails with the field's name (never a timer that fires at once, never a raw
 * RangeError).
 */
function numberSetting(credentials: ICredentialDataDecryptedObject, field: NumberField): number {
	const raw = credentials[field.name];
	if (raw === undefined || raw === null || raw === '') return field.default;
	const value = typeof raw === 'number' || typeof raw === 'string' ? Number(raw) : Number.NaN;
	const kind = field.wholeNumber ? 'a whole number' : 'a number';
	if (
		!Number.isFinite(value) ||
		value < field.min ||
		value > field.max ||
		(field.wholeNumber && !Number.isInteger(value))
	) {
		throw new Error(
			`The credential's ${field.displayName} must be ${kind} from ${field.min} to ${field.max}, not ${JSON.stringify(raw)}`,
		);
	}
	return value;
}

/** The credential's Request Timeout (Seconds), in whole milliseconds. */
export function requestTimeoutMs(credentials: ICredentialDataDecryptedObject): number {
	return Math.round(numberSetting(credentials, REQUEST_TIMEOUT_FIELD) * 1000);
}

/** Bucket terms of the credential: the standard terms unless the account has its own. */
export function bucketTerms(credentials: ICredentialDataDecryptedObject): BucketTerms {
	if (credentials.customRateLimit !== true) return DEFAULT_TERMS;
	return {
		capacity: numberSetting(credentials, BUCKET_CAPACITY_FIELD),
		intervalMs: numberSetting(credentials, LEAK_INTERVAL_FIELD) * 1000,
	};
}
