import type { IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { customerOverrideOf } from '../../../shared/customer';
import { HASHCODE, MD5 } from '../../../shared/ports';
import { DEFAULT_LOOK_UP_AGAIN_DAYS } from '../../../shared/knownImages';
import { allowanceFrom, cleanServiceText } from '../../../shared/transport';
import type { RunParameters } from '../runParameters';
import type { BatchTarget } from './imageBatches';
import {
	DEFAULT_MAX_PHOTO_MEGABYTES,
	DEFAULT_PHOTO_TIMEOUT_SECONDS,
	photoUrlOf,
	type PhotoBounds,
} from './photos';

export const DEFAULT_IMAGES_PER_REQUEST = 50;
/** Below the 30,000,000 bytes that common servers (IIS, ASP.NET Core) accept by default. */
export const DEFAULT_MAX_REQUEST_MEGABYTES = 25;
/**
 * Photos fetched at once by default: from a host answering in 100 ms, 12 keep the waiting below an
 * eighth of one photo after another (8 left 0.13 to 0.15 of it: on average only about 7 are on
 * their way), and a shop's server or CDN still sees a handful of connections, not a flood.
 */
export const DEFAULT_PHOTOS_AT_ONCE = 12;
const MEGABYTE = 1024 * 1024;

interface UploadOptions {
	clippingPath?: string;
	customer?: unknown;
	invert?: boolean;
	skipExisting?: boolean;
	imagesPerRequest?: number;
	maxRequestMegabytes?: number;
	rememberKnownImages?: boolean;
	lookUpAgainAfterDays?: number;
	knownHashcode?: string;
	knownMd5?: string;
	knownVersion?: string;
	maxPhotoMegabytes?: number;
	photoTimeoutSeconds?: number;
	allowedInternalHosts?: string;
	photosAtOnce?: number;
}

/** The image the item says the service has (Known MD5 and Known Hashcode). */
export interface GivenKnown {
	md5: string;
	hashcode: string;
}

/** A photo given by URL, and what the item knows of it. */
export interface PhotoSettings {
	url: string;
	version: string;
	knownVersion: string;
	bounds: PhotoBounds;
	/** How many photos of the run are fetched at once (Photos At Once). */
	atOnce: number;
}

/** Everything an item of Image Upload asks for, read and checked before any request. */
export interface UploadSettings {
	itemIndex: number;
	source: 'all' | 'named' | 'url';
	/** Input Binary Fields, with Named Binary Fields. */
	binaryProperties: string;
	photo: PhotoSettings | undefined;
	givenKnown: GivenKnown | undefined;
	target: BatchTarget;
	/** The target as text: images are the same only for the same target. */
	targetKey: string;
	limits: { images: number; bytes: number };
	skipExisting: boolean;
	rememberKnownImages: boolean;
	lookUpAgainAfterDays: number;
}

/** An item's settings: every parameter read once, every value checked, in the order shown. */
export function uploadSettings(
	context: IExecuteFunctions,
	parameters: RunParameters,
	itemIndex: number,
): UploadSettings {
	const source = parameters.read('imagesFrom', itemIndex, 'named') as UploadSettings['source'];
	const options = parameters.read('options', itemIndex, {}) as UploadOptions;
	const customer = customerOverrideOf(context, itemIndex, options.customer ?? null);
	const photo =
		source === 'url' ? photoSettings(context, parameters, itemIndex, options) : undefined;
	const binaryProperties =
		source === 'named' ? (parameters.read('binaryProperties', itemIndex, undefined) as string) : '';
	const givenKnown = knownFromItem(context, itemIndex, options);
	const limits = {
		images: Math.floor(
			positiveOption(
				context,
				itemIndex,
				'Images Per Request',
				options.imagesPerRequest ?? DEFAULT_IMAGES_PER_REQUEST,
				1,
			),
		),
		bytes: Math.floor(
			positiveOption(
				context,
				itemIndex,
				'Max Request Size (MB)',
				options.maxRequestMegabytes ?? DEFAULT_MAX_REQUEST_MEGABYTES,
				0.1,
			) * MEGABYTE,
		),
	};
	const target: BatchTarget = {
		customer,
		invert: options.invert === true,
		clippingPath: options.clippingPath?.trim() ?? '',
	};
	return {
		itemIndex,
		source,
		binaryProperties,
		photo,
		givenKnown,
		target,
		targetKey: JSON.stringify(target),
		limits,
		skipExisting: options.skipExisting === true,
		rememberKnownImages: options.rememberKnownImages !== false,
		lookUpAgainAfterDays: options.lookUpAgainAfterDays ?? DEFAULT_LOOK_UP_AGAIN_DAYS,
	};
}

function photoSettings(
	context: IExecuteFunctions,
	parameters: RunParameters,
	itemIndex: number,
	options: UploadOptions,
): PhotoSettings {
	return {
		url: photoUrlOf(context, itemIndex, parameters.read('photoUrl', itemIndex, undefined)),
		version: String(parameters.read('photoVersion', itemIndex, '') ?? '').trim(),
		knownVersion: String(options.knownVersion ?? '').trim(),
		bounds: {
			maxBytes: Math.floor(
				positiveOption(
					context,
					itemIndex,
					'Max Photo Size (MB)',
					options.maxPhotoMegabytes ?? DEFAULT_MAX_PHOTO_MEGABYTES,
					0.001,
				) * MEGABYTE,
			),
			// Whole milliseconds, as AbortSignal.timeout takes them (an expression may give 2.5 s).
			timeoutMs: Math.round(
				positiveOption(
					context,
					itemIndex,
					'Photo Timeout (Seconds)',
					options.photoTimeoutSeconds ?? DEFAULT_PHOTO_TIMEOUT_SECONDS,
					1,
				) * 1000,
			),
			allowance: allowanceFrom(context, itemIndex, options.allowedInternalHosts),
		},
		atOnce: Math.floor(
			positiveOption(
				context,
				itemIndex,
				'Photos At Once',
				options.photosAtOnce ?? DEFAULT_PHOTOS_AT_ONCE,
				1,
			),
		),
	};
}

/**
 * The image the item says the service has (Known MD5 and Known Hashcode), checked before any
 * request: both or neither, an MD5 and a hashcode.
 */
function knownFromItem(
	context: IExecuteFunctions,
	itemIndex: number,
	options: UploadOptions,
): GivenKnown | undefined {
	const hashcode = typeof options.knownHashcode === 'string' ? options.knownHashcode.trim() : '';
	const md5 = typeof options.knownMd5 === 'string' ? options.knownMd5.trim().toLowerCase() : '';
	const refuse = (message: string) =>
		new NodeOperationError(context.getNode(), `${message} in item ${itemIndex}`, {
			itemIndex,
			description:
				'Known MD5 and Known Hashcode come together, as an earlier run gave them (md5 and hashcode of its output item). Leave both empty for an image not known yet.',
		});
	if (hashcode === '' && md5 === '') return undefined;
	if (hashcode === '') throw refuse('Known MD5 is given without Known Hashcode');
	if (md5 === '') throw refuse('Known Hashcode is given without Known MD5');
	if (!MD5.test(md5))
		throw refuse(
			`Known MD5 is not an MD5 (32 hex digits): ${JSON.stringify(cleanServiceText(md5, 64))}`,
		);
	if (!HASHCODE.test(hashcode))
		throw refuse(
			`Known Hashcode is not an image hashcode: ${JSON.stringify(cleanServiceText(hashcode, 64))}`,
		);
	return { md5, hashcode };
}

/** A count or size option of an item: an expression can give any value, so it is checked here. */
function positiveOption(
	context: IExecuteFunctions,
	itemIndex: number,
	field: string,
	value: number,
	minimum: number,
): number {
	if (typeof value === 'number' && Number.isFinite(value) && value >= minimum) return value;
	throw new NodeOperationError(
		context.getNode(),
		`${field} of item ${itemIndex} must be a number of at least ${minimum}, not ${JSON.stringify(value)}`,
		{ itemIndex },
	);
}
