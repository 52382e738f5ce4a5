// The image routes: upload (multipart), existence by hashcode, lookup by MD5 or URI.
import { drainBody, readBody } from '../body';
import { multipartBoundary, MultipartError, parseMultipart } from '../multipart';
import { MESSAGES } from '../fixtures';
import { invalid, json, message, text, type Reply } from '../replies';
import { header, route, type RequestContext, type Route, type Service } from './route';

export function imageRoutes(service: Service): Route[] {
	return [
		route('POST /api/images', /^\/api\/images$/, 'required', (c) => uploadImages(service, c)),
		route('HEAD /api/images/{hashcode}', /^\/api\/images\/([^/]+)$/, 'required', (c) =>
			imageExists(service, c),
		),
		route('GET /api/images', /^\/api\/images$/, 'required', (c) => findImage(service, c)),
	];
}

async function uploadImages({ options, store }: Service, context: RequestContext): Promise<Reply> {
	const { req, url } = context;
	const boundary = multipartBoundary(header(req, 'content-type'));
	const invertParam = url.searchParams.get('invert');
	const clippingPath = url.searchParams.get('clippingpath');
	const { maxRequestBytes, maxImages } = store.imageLimits;
	const announced = Number(header(req, 'content-length'));
	// As a web server in front of the service does: a body announced too large is refused unread.
	if (maxRequestBytes > 0 && Number.isFinite(announced) && announced > maxRequestBytes) {
		await drainBody(req);
		return tooLarge(store);
	}
	const body = await readBody(req);
	if (maxRequestBytes > 0 && body.length > maxRequestBytes) return tooLarge(store);
	if (!boundary) return invalid();
	if (invertParam !== null && !/^(true|false)$/i.test(invertParam)) return invalid();
	let files;
	try {
		files = parseMultipart(body, boundary).filter((p) => p.name === 'file');
	} catch (error) {
		if (error instanceof MultipartError) return invalid();
		throw error;
	}
	if (files.length === 0 || files.some((f) => f.data.length === 0)) return invalid();
	// As the service does: one part that is not an image refuses the whole request, naming none.
	if (store.imageLimits.onlyImages && !files.every((f) => isImage(f.data))) return invalid();
	if (maxImages > 0 && files.length > maxImages) return tooLarge(store);
	const invert = invertParam?.toLowerCase() === 'true';
	const stored = files.map((f) =>
		store.addImage(f.data, f.fileName, f.contentType, invert, clippingPath || null),
	);
	switch (options.imageUploadLayout) {
		case 'strings':
			return json(
				200,
				stored.map((i) => i.hashcode),
			);
		case 'text':
			return text(200, stored.map((i) => i.hashcode).join('\n'));
		default:
			return json(
				200,
				stored.map((image, n) => ({
					fileName: files[n].fileName,
					hashcode: image.hashcode,
					md5: image.md5,
				})),
			);
	}
}

/** The first bytes of the image formats the service reads: JPEG, PNG, GIF, WebP, TIFF, BMP. */
const IMAGE_SIGNATURES: Array<[offset: number, bytes: string]> = [
	[0, 'ffd8ff'],
	[0, '89504e470d0a1a0a'],
	[0, '474946383'],
	[8, '57454250'],
	[0, '49492a00'],
	[0, '4d4d002a'],
	[0, '424d'],
];

function isImage(data: Buffer): boolean {
	const hex = data.subarray(0, 16).toString('hex');
	return IMAGE_SIGNATURES.some(([offset, bytes]) => hex.startsWith(bytes, offset * 2));
}

/** Nothing of a refused upload is stored. */
function tooLarge(store: Service['store']): Reply {
	store.noteTooLarge();
	return message(413, MESSAGES.tooLarge);
}

function imageExists({ store }: Service, context: RequestContext): Reply {
	const [hashcode] = context.params;
	return { status: store.findImage({ hashcode }) ? 200 : 404 };
}

function findImage({ options, store }: Service, context: RequestContext): Reply {
	const md5 = context.url.searchParams.get('md5') || undefined;
	const uri = context.url.searchParams.get('uri') || undefined;
	if ((md5 === undefined) === (uri === undefined)) return invalid();
	const image = store.findImage(md5 !== undefined ? { md5 } : { uri });
	if (!image) return { status: 404 };
	switch (options.imageFindLayout) {
		case 'json-string':
			return json(200, image.hashcode);
		case 'object':
			return json(200, { hashcode: image.hashcode });
		default:
			return text(200, image.hashcode);
	}
}
