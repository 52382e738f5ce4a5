/**
 * A catalogue's photos synced twice in a real n8n (`n8n start`, regular mode) against the
 * emulator: the first sync packs the images of many items into requests and splits the one the
 * service refuses as too large; the re-sync sends no image request at all.
 */
import { createHash, randomBytes } from 'node:crypto';

import { listenLocal } from '../helpers/server';
import { postControl } from '../helpers/service';
import {
	actionNode,
	chainWorkflow,
	nodeItems,
	prepareN8n,
	type InputItem,
	type N8nHarness,
	type StoredExecution,
} from './harness';

const HASHCODE = /^[0-9a-f]{32}$/;
const PRODUCTS = 4;

function md5(data: Buffer): string {
	return createHash('md5').update(data).digest('hex');
}

let n8n: N8nHarness;

beforeAll(async () => {
	n8n = await prepareN8n();
});

afterAll(async () => {
	await n8n?.stop();
});

function requests(route: string): number {
	return n8n.emulator.stats().requests[route] ?? 0;
}

function hints(run: StoredExecution, nodeName: string): string[] {
	return (run.data.resultData.runData[nodeName]?.[0]?.hints ?? []).map((hint) => hint.message);
}

test('first sync in shared requests, split after "too large"; the re-sync sends no image request', async () => {
	// The service takes 3 images per request at most; the node starts with 10.
	await postControl(n8n.emulator.url, 'limits', { maxImagesPerRequest: 3 });
	const photos = Array.from({ length: PRODUCTS }, () => [randomBytes(700), randomBytes(900)]);
	const items: InputItem[] = photos.map(([front, back], index) => ({
		json: { sku: `SKU-${index}` },
		binary: {
			front: { data: front, mimeType: 'image/png', fileName: `sku-${index}-front.png` },
			back: { data: back, mimeType: 'image/png', fileName: `sku-${index}-back.png` },
		},
	}));
	const id = await n8n.importWorkflow(
		chainWorkflow('Catalogue photos', items, [
			actionNode('Upload Photos', {
				resource: 'image',
				operation: 'upload',
				imagesFrom: 'named',
				binaryProperties: 'front, back',
				options: { imagesPerRequest: 10 },
			}),
		]),
	);

	const first = await n8n.executeWorkflow(id);
	const uploaded = nodeItems(first, 'Upload Photos');
	expect(uploaded.map(({ md5: sent, hashcode }) => [sent, hashcode])).toEqual(
		photos
			.flat()
			.map((data) => [
				md5(data),
				n8n.emulator.images().find((image) => image.md5 === md5(data))?.hashcode,
			]),
	);
	expect(uploaded.every(({ hashcode }) => HASHCODE.test(String(hashcode)))).toBe(true);
	const paired = first.data.resultData.runData['Upload Photos'][0].data?.main?.[0]?.map(
		(item) => item.pairedItem,
	);
	expect(paired).toEqual(photos.flatMap((_, index) => [{ item: index }, { item: index }]));
	// 8 images refused, then the first 4 refused; from then on requests of 2: each image stored once.
	expect(n8n.emulator.stats().rejected413).toBe(2);
	expect(requests('POST /api/images')).toBe(6);
	expect(n8n.emulator.stats().images).toBe(2 * PRODUCTS);
	expect(hints(first, 'Upload Photos')).toEqual([
		expect.stringMatching(/^Known images are remembered in this n8n process only/),
	]);

	const before = { posts: requests('POST /api/images'), lookups: requests('GET /api/images') };
	const second = await n8n.executeWorkflow(id);
	expect(requests('POST /api/images')).toBe(before.posts);
	expect(requests('GET /api/images')).toBe(before.lookups);
	expect(nodeItems(second, 'Upload Photos')).toEqual(
		uploaded.map((item) => ({ ...item, known: true })),
	);
});

test('a photo host on this machine is refused by default, reached when Allowed Internal Hosts names it, and a host beside it still refused', async () => {
	const photo = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(600)]);
	let photoRequests = 0;
	const host = await listenLocal((_request, res) => {
		photoRequests++;
		res.writeHead(200, { 'content-type': 'image/png' }).end(photo);
	});
	// Another server on the same address, another port: never asked either.
	let neighbourRequests = 0;
	const neighbour = await listenLocal((_request, res) => {
		neighbourRequests++;
		res.writeHead(200, { 'content-type': 'image/png' }).end(photo);
	});
	try {
		const named = new URL(host.url).host;
		const { port } = new URL(host.url);
		const urls = [
			`http://${named}/p/1.png`,
			`http://${new URL(neighbour.url).host}/p/1.png`,
			`http://127.0.0.2:${port}/p/1.png`,
			`http://localhost:${port}/p/1.png`,
			'http://169.254.169.254/latest/meta-data/iam/security-credentials/role',
		];
		const items: InputItem[] = urls.map((url) => ({ json: { url } }));
		const upload = async (allowedInternalHosts: string) =>
			nodeItems(
				await n8n.executeWorkflow(
					await n8n.importWorkflow(
						chainWorkflow('Photos on this machine', items, [
							actionNode(
								'Upload Photos',
								{
									resource: 'image',
									operation: 'upload',
									imagesFrom: 'url',
									photoUrl: '={{ $json.url }}',
									options: { allowedInternalHosts, rememberKnownImages: false },
								},
								{ onError: 'continueRegularOutput' },
							),
						]),
					),
				),
				'Upload Photos',
			).map(({ error, md5: sent }) => error ?? sent);
		const refused = (item: number, reason: string) =>
			`The photo ${urls[item]} of item ${item} is not fetched: it leads to ${reason}`;
		const loopback = (item: number) => refused(item, 'a loopback address');
		// A name is refused in the same words whether it has no address or an internal one.
		const hidden = `The photo ${urls[3]} of item 3 is not fetched: localhost is either unreachable or not on the public internet (a host inside your network is reached only where Allowed Internal Hosts names it)`;
		const metadata = refused(4, 'a link-local address (cloud metadata among them)');
		const imageRequests = requests('POST /api/images');

		expect(await upload('')).toEqual([loopback(0), loopback(1), loopback(2), hidden, metadata]);
		expect(photoRequests).toBe(0);
		expect(requests('POST /api/images')).toBe(imageRequests);

		expect(await upload(named)).toEqual([md5(photo), loopback(1), loopback(2), hidden, metadata]);
		expect(photoRequests).toBe(1);
		expect(neighbourRequests).toBe(0);
	} finally {
		await neighbour.close();
		await host.close();
	}
});
