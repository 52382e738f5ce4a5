import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { cleanServiceText } from '../../../shared/transport';
import { measureImage, selectBinaryImages, type BinaryImage } from './binaryImages';
import { imageSignature } from './imageSignature';
import { fetchPhoto } from './photos';
import type { GivenKnown, PhotoSettings, UploadSettings } from './uploadSettings';

/** An item's images, measured; or, for a photo known without a download, its answer. */
export type ItemImages = { images: BinaryImage[] } | { answer: IDataObject };

/** The images of the items of one run: binary fields read, photos fetched at most once per run. */
export class RunImages {
	/** Photos fetched in this run, by target, URL and version. */
	private readonly photos = new Map<string, BinaryImage>();

	/** Photos the host said are not modified since a known version, by URL, version and known version. */
	private readonly notModified = new Set<string>();

	/**
	 * @param isAnswered whether the run has the answer to an image (target and md5), so that a
	 * photo met again needs neither its bytes nor a download.
	 */
	constructor(
		private readonly context: IExecuteFunctions,
		private readonly isAnswered: (sameImage: string) => boolean,
	) {}

	async of(settings: UploadSettings): Promise<ItemImages> {
		const { context } = this;
		const { itemIndex, source, photo } = settings;
		if (source === 'url' && photo) return await this.photoOf(settings, photo);
		const images = selectBinaryImages(
			context,
			itemIndex,
			source === 'all' ? 'all' : 'named',
			settings.binaryProperties,
		);
		// Read each image once before anything is sent: an image that cannot be read fails its item
		// alone, instead of breaking a request that carries other items' images.
		for (const image of images) await measureImage(context, itemIndex, image);
		return { images };
	}

	/**
	 * A photo given by URL: answered from the item's Known Version or the host's "not modified"
	 * without a download, met before in this run (same URL and version) without another, or
	 * fetched and measured.
	 */
	private async photoOf(settings: UploadSettings, photo: PhotoSettings): Promise<ItemImages> {
		const { itemIndex, targetKey, givenKnown } = settings;
		const { url, version, knownVersion } = photo;
		if (givenKnown && version !== '' && version === knownVersion)
			return knownPhoto(url, version, givenKnown);
		// The same URL and version met before in this run: no second download, while its bytes or
		// its answer are still there.
		const key = JSON.stringify([targetKey, url, version]);
		const met = this.photos.get(key);
		if (met && (met.data !== undefined || this.isAnswered(`${targetKey}\n${met.md5 as string}`)))
			return { images: [{ ...met }] };
		const revalidation = JSON.stringify([url, version, knownVersion]);
		if (givenKnown && this.notModified.has(revalidation))
			return knownPhoto(url, knownVersion, givenKnown);
		const fetched = await fetchPhoto(
			this.context,
			itemIndex,
			url,
			version,
			givenKnown ? knownVersion : '',
			photo.bounds,
		);
		if ('notModified' in fetched) {
			this.notModified.add(revalidation);
			return knownPhoto(url, knownVersion, givenKnown);
		}
		this.checkIsImage(itemIndex, fetched.image);
		await measureImage(this.context, itemIndex, fetched.image);
		this.photos.set(key, fetched.image);
		return { images: [fetched.image] };
	}

	/** A body that is not an image fails its item here, before it costs an image request. */
	private checkIsImage(itemIndex: number, photo: BinaryImage): void {
		const signature = imageSignature(photo.data as Buffer);
		if ('image' in signature) return;
		const saidType = photo.mimeType === 'application/octet-stream' ? '' : ` as ${photo.mimeType}`;
		throw new NodeOperationError(
			this.context.getNode(),
			`The Photo URL of item ${itemIndex} is not an image: ${cleanServiceText(photo.url ?? '', 200)} sent ${signature.notImage}${saidType}`,
			{
				itemIndex,
				description:
					'Nothing was uploaded. A shop often answers a missing photo with a page of its own: check that the photo is still at its URL.',
			},
		);
	}
}

function knownPhoto(url: string, version: string, givenKnown: GivenKnown | undefined): ItemImages {
	return {
		answer: {
			hashcode: givenKnown?.hashcode,
			md5: givenKnown?.md5,
			url,
			version,
			known: 'item',
		},
	};
}
