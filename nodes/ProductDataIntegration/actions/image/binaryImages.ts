import type { IBinaryData, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { edition, type FilePart } from '../../../shared/ports';

/** One image of an input item: a binary property and what is known about its bytes. */
export interface BinaryImage {
	binaryProperty: string;
	fileName: string;
	mimeType: string;
	/** Set when n8n keeps the data in its binary store (filesystem, S3): read as a stream. */
	binaryDataId?: string;
	/** Set by measureImage. */
	md5?: string;
	bytes?: number;
	/** A photo fetched from its URL (./photos.ts): the URL, the version it was fetched at, its bytes until sent. */
	url?: string;
	version?: string;
	data?: Buffer;
}

/** How errors name an image: its binary field, or its photo URL. */
export function imageName(image: BinaryImage): string {
	return image.url !== undefined ? `photo ${image.url}` : `binary field "${image.binaryProperty}"`;
}

/** The binary properties of an item that hold its images, in the order the user gave them. */
export function selectBinaryImages(
	context: IExecuteFunctions,
	itemIndex: number,
	source: 'all' | 'named',
	names: string,
): BinaryImage[] {
	let properties: Array<[string, IBinaryData]>;
	if (source === 'all') {
		const binary = context.getInputData()[itemIndex]?.binary ?? {};
		properties = Object.entries(binary);
		if (properties.length === 0) {
			throw new NodeOperationError(context.getNode(), `Item ${itemIndex} has no binary data`, {
				itemIndex,
				description:
					'Images From is "All Binary Fields", so the input item must hold at least one binary field',
			});
		}
	} else {
		const wanted = [
			...new Set(
				names
					.split(',')
					.map((name) => name.trim())
					.filter((name) => name !== ''),
			),
		];
		if (wanted.length === 0) {
			throw new NodeOperationError(
				context.getNode(),
				`Input Binary Fields is empty in item ${itemIndex}`,
				{
					itemIndex,
					description:
						'Give the names of the binary fields that hold the images, separated by commas (e.g. data, image2)',
				},
			);
		}
		properties = wanted.map((name) => [name, context.helpers.assertBinaryData(itemIndex, name)]);
	}
	return properties.map(([binaryProperty, binary]) => ({
		binaryProperty,
		fileName: partFileName(binary.fileName || defaultFileName(binaryProperty, binary)),
		mimeType: partMimeType(
			context,
			itemIndex,
			binaryProperty,
			binary.mimeType || 'application/octet-stream',
		),
		binaryDataId: binary.id || undefined,
	}));
}

const TOKEN = '[A-Za-z0-9!#$&^_.+-]+';
// Spaces between parameters, and no control character in a quoted value (NUL, VT, a line break): see checkPartContentType.
const MEDIA_TYPE = new RegExp(
	`^${TOKEN}/${TOKEN}( *; *${TOKEN}=(${TOKEN}|"[^"\\\\\\p{Cc}]*"))*$`,
	'u',
);

/**
 * The binary's MIME type goes into the part's Content-Type header as it is: item data that is not a
 * media type (a line break would add header lines to the part) fails the item before any request.
 */
function partMimeType(
	context: IExecuteFunctions,
	itemIndex: number,
	binaryProperty: string,
	mimeType: string,
): string {
	if (MEDIA_TYPE.test(mimeType)) return mimeType;
	throw new NodeOperationError(
		context.getNode(),
		`The MIME type of binary field "${binaryProperty}" of item ${itemIndex} is not a media type: ${JSON.stringify(mimeType)}`,
		{
			itemIndex,
			description:
				'A media type looks like image/jpeg. Set the MIME type of the binary data, e.g. with an Edit Fields or Code node.',
		},
	);
}

/** The file name goes into the part's header between quotes: quotes, backslashes and control characters are replaced. */
function partFileName(fileName: string): string {
	return fileName.replace(/["\\\p{Cc}]/gu, '_');
}

function defaultFileName(binaryProperty: string, binary: IBinaryData): string {
	return binary.fileExtension ? `${binaryProperty}.${binary.fileExtension}` : binaryProperty;
}

/** An image as a part of a multipart body: a stored image is streamed from n8n's binary store when sent. */
export function imagePart(
	context: IExecuteFunctions,
	itemIndex: number,
	image: BinaryImage,
): FilePart {
	const part: FilePart = {
		name: 'file',
		filename: image.fileName,
		contentType: image.mimeType,
		size: image.bytes,
		read: async () =>
			image.data ?? (await context.helpers.getBinaryDataBuffer(itemIndex, image.binaryProperty)),
	};
	const id = image.binaryDataId;
	if (id !== undefined && image.data === undefined)
		part.open = async () => await context.helpers.getBinaryStream(id);
	return part;
}

/**
 * Reads an image once to learn its md5 and length: a stored image as a stream, so that measuring
 * holds no image in memory whole; inline data (in the item already) is decoded and let go. Sending
 * differs by edition: the full edition streams each image again, the verified one holds a request's
 * images in memory while it sends them (../../../shared/ports/inMemoryMultipart.ts).
 */
export async function measureImage(
	context: IExecuteFunctions,
	itemIndex: number,
	image: BinaryImage,
): Promise<void> {
	let digest;
	try {
		digest = await edition().digestOf(imagePart(context, itemIndex, image));
	} catch (error) {
		throw new NodeOperationError(
			context.getNode(),
			`The image in ${imageName(image)} of item ${itemIndex} cannot be read`,
			{
				itemIndex,
				description: `${(error as Error).message}. n8n no longer has the file (e.g. it was pruned with an older execution): produce the binary data again in this execution.`,
			},
		);
	}
	image.md5 = digest.md5;
	image.bytes = digest.bytes;
}
