/**
 * The two editions: each edition module `X.ts` of the full edition and its twin `X.verified.ts`,
 * which the verified edition is built with in its place (scripts/verified.mjs): the edition's value
 * the node files install (nodes/edition/) and the credential's identity (credentials/edition.ts).
 * One contract per port, run against both editions: what the house relies on, whichever edition
 * it is built in.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';

import { sleep } from 'n8n-workflow';

import { ProductDataIntegrationApi } from '../../credentials/ProductDataIntegrationApi.credentials';
import * as fullCredential from '../../credentials/edition';
import * as verifiedCredential from '../../credentials/edition.verified';
import { EDITION as fullEdition } from '../../nodes/edition/edition';
import { EDITION as verifiedEdition } from '../../nodes/edition/edition.verified';
import type { Edition, FilePart, MultipartUpload } from '../../nodes/shared/ports';
import { multipartBoundary, parseMultipart } from '../../scripts/emulator/multipart';

const ROOT = join(__dirname, '..', '..');

function twinsUnder(folder: string): string[] {
	return readdirSync(join(ROOT, folder), { withFileTypes: true, recursive: true })
		.filter((entry) => entry.isFile() && entry.name.endsWith('.verified.ts'))
		.map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

describe('every twin', () => {
	const twins = [...twinsUnder('nodes'), ...twinsUnder('credentials')];

	it('is found where the verified build looks for them', () => {
		expect(twins.sort()).toEqual([
			'credentials/edition.verified.ts',
			'nodes/edition/edition.verified.ts',
		]);
	});

	it.each(twins)(
		'%s exports what its full-edition module exports, each of the same kind',
		async (twin) => {
			const kinds = (module: Record<string, unknown>) =>
				Object.entries(module)
					.map(([name, value]) => `${name}: ${typeof value}`)
					.sort();
			const full = (await import(join(ROOT, twin.replace(/\.verified\.ts$/, '.ts')))) as Record<
				string,
				unknown
			>;
			const verified = (await import(join(ROOT, twin))) as Record<string, unknown>;
			expect(kinds(verified)).toEqual(kinds(full));
		},
	);
});

/** A part whose bytes are `data`. */
function part(filename: string, contentType: string, data: Buffer): FilePart {
	return { name: 'file', filename, contentType, size: data.length, read: async () => data };
}

/** The bytes and content type of one attempt's body, whether built in memory or streamed. */
async function sent(upload: MultipartUpload): Promise<{ contentType: string; bytes: Buffer }> {
	const body = (await upload.body()) as unknown;
	if (Buffer.isBuffer(body))
		return { contentType: String(upload.headers['content-type']), bytes: body };
	const form = body as Readable & { getHeaders(): Record<string, string> };
	const chunks: Buffer[] = [];
	await new Promise<void>((resolve, reject) => {
		form.on('data', (chunk: Buffer | string) => chunks.push(Buffer.from(chunk)));
		form.once('end', resolve);
		form.once('error', reject);
		form.resume();
	});
	return { contentType: form.getHeaders()['content-type'], bytes: Buffer.concat(chunks) };
}

test('each edition has every port of the house, the verified edition no client and no proxy reading of its own', () => {
	const ownClient = ['exchangeDirectly', 'proxyOf'];
	expect(Object.keys(verifiedEdition).sort()).toEqual(
		Object.keys(fullEdition)
			.filter((port) => !ownClient.includes(port))
			.sort(),
	);
	for (const port of ownClient) {
		expect(fullEdition[port as keyof Edition]).toBeInstanceOf(Function);
		expect(verifiedEdition[port as keyof Edition]).toBeUndefined();
	}
});

describe.each([
	['full', fullEdition],
	['verified', verifiedEdition],
])('the multipart body (%s edition)', (_edition, multipart) => {
	// Bytes that look like framing: CRLF, a delimiter's dashes, a NUL, every byte value.
	const tricky = Buffer.concat([
		Buffer.from('\r\n--\r\n\r\n--x--\0'),
		Buffer.from(Array.from({ length: 256 }, (_, n) => n)),
	]);
	const md5 = (data: Buffer) => createHash('md5').update(data).digest('hex');

	it('carries each part with its field name, file name, content type and bytes, and tells what it sent', async () => {
		const upload = multipart.encodeMultipart([
			part('front.jpg', 'image/jpeg', tricky),
			part('back side.png', 'image/png', Buffer.from('png')),
		]);
		const { contentType, bytes } = await sent(upload);
		const boundary = multipartBoundary(contentType);
		expect(boundary).not.toBeNull();

		const read = parseMultipart(bytes, boundary as string);
		expect(
			read.map(({ name, fileName, contentType: type, data }) => ({
				name,
				fileName,
				type,
				data: Buffer.from(data),
			})),
		).toEqual([
			{ name: 'file', fileName: 'front.jpg', type: 'image/jpeg', data: tricky },
			{ name: 'file', fileName: 'back side.png', type: 'image/png', data: Buffer.from('png') },
		]);
		expect(upload.digests()).toEqual([
			{ md5: md5(tricky), bytes: tricky.length },
			{ md5: md5(Buffer.from('png')), bytes: 3 },
		]);
		upload.close();
	});

	it('gives a body for every attempt, each as whole as the first', async () => {
		const upload = multipart.encodeMultipart([part('a.jpg', 'image/jpeg', tricky)]);
		const first = await sent(upload);
		const again = await sent(upload);
		const partsOf = ({ contentType, bytes }: { contentType: string; bytes: Buffer }) =>
			parseMultipart(bytes, multipartBoundary(contentType) as string).map(({ data }) =>
				Buffer.from(data),
			);
		expect(partsOf(again)).toEqual(partsOf(first));
		upload.close();
	});

	it('measures a part by reading it', async () => {
		expect(await multipart.digestOf(part('a.jpg', 'image/jpeg', tricky))).toEqual({
			md5: md5(tricky),
			bytes: tricky.length,
		});
	});
});

describe.each([
	['full', fullEdition],
	['verified', verifiedEdition],
])("where the account's bucket lives (%s edition)", (edition, bucketHome) => {
	const terms = { capacity: 50, intervalMs: 5000 };
	const processOnly = { rateLimitSharing: 'process' };

	it('one limiter per account in the process, granted at once while the bucket is idle', async () => {
		const limiter = bucketHome.accountLimiter(
			`${edition}-account`,
			{ holder: 'holder', terms },
			processOnly,
			sleep,
		);
		expect(
			bucketHome.accountLimiter(
				`${edition}-account`,
				{ holder: 'holder', terms },
				processOnly,
				sleep,
			),
		).toBe(limiter);
		expect(
			bucketHome.accountLimiter(
				`${edition}-other`,
				{ holder: 'holder', terms },
				processOnly,
				sleep,
			),
		).not.toBe(limiter);
		const started = Date.now();
		await (await limiter.acquire()).settle();
		expect(Date.now() - started).toBeLessThan(1000);
	});
});

describe.each([
	['full', fullEdition],
	['verified', verifiedEdition],
])('where known images are shared (%s edition)', (_edition, home) => {
	it('nowhere for a credential whose bucket lives in the process: the process remembers them', () => {
		expect(
			home.sharedKnownImages({ rateLimitSharing: 'process' }, 'holder', 'scope', 60_000),
		).toBeUndefined();
	});

	it('advises only what the edition offers: a sentence of its own, or nothing', () => {
		expect(home.knownImagesAdvice).toMatch(home === fullEdition ? /^ With Redis .*\.$/ : /^$/);
	});
});

describe.each([
	['full', fullEdition],
	['verified', verifiedEdition],
])("where the triggers' shared answers are kept (%s edition)", (_edition, home) => {
	it('nowhere for a credential whose bucket lives in the process: each process shares within itself', () => {
		expect(home.answerHome({ rateLimitSharing: 'process' })).toBeUndefined();
	});
});

describe.each([
	['full', fullCredential],
	['verified', verifiedCredential],
])("the credential's identity (%s edition)", (_edition, edition) => {
	it('a credential type name and a display name', () => {
		expect(edition.CREDENTIAL_NAME).toMatch(/^[a-z][A-Za-z]*Api$/);
		expect(edition.CREDENTIAL_DISPLAY_NAME).toMatch(/^Product Data Integration .*API$/);
	});
});

test('the two editions name their credential types apart, so both can be installed', () => {
	expect(verifiedCredential.CREDENTIAL_NAME).not.toBe(fullCredential.CREDENTIAL_NAME);
	expect(verifiedCredential.CREDENTIAL_DISPLAY_NAME).not.toBe(
		fullCredential.CREDENTIAL_DISPLAY_NAME,
	);
	// Each edition's value names the credential type its build's credential module declares: in the
	// source both read credentials/edition.ts, which the verified build swaps for its twin as well
	// (test/tools/verified.test.ts checks the built nodes name the verified type).
	expect(fullEdition.credentialType).toBe(fullCredential.CREDENTIAL_NAME);
	expect(verifiedEdition.credentialType).toBe(fullCredential.CREDENTIAL_NAME);
});

describe.each([
	['full', fullCredential],
	['verified', verifiedCredential],
])("the credential's Rate Limit Sharing fields (%s edition)", (_edition, sharing) => {
	it("clash with none of the credential's own fields, and show only on fields of the credential", () => {
		const own = new ProductDataIntegrationApi().properties
			.filter((property) => !sharing.sharingProperties.includes(property))
			.map((property) => property.name);
		const names = sharing.sharingProperties.map((property) => property.name);
		expect(new Set(names).size).toBe(names.length);
		expect(names.filter((name) => own.includes(name))).toEqual([]);
		const shownBy = sharing.sharingProperties.flatMap((property) =>
			Object.keys(property.displayOptions?.show ?? {}),
		);
		expect(shownBy.filter((name) => !names.includes(name) && !own.includes(name))).toEqual([]);
	});
});

describe.each([
	['full', fullEdition],
	['verified', verifiedEdition],
])('where the runs of a node are kept apart across processes (%s edition)', (_edition, home) => {
	const saved = { ...process.env };
	afterEach(() => {
		process.env = { ...saved };
	});

	it('outside queue mode nowhere but in each process: no lease, nothing logged', async () => {
		process.env.EXECUTIONS_MODE = 'regular';
		const logged: string[] = [];
		const logger = {
			debug: (message: string) => logged.push(message),
			info: (message: string) => logged.push(message),
			warn: (message: string) => logged.push(message),
			error: (message: string) => logged.push(message),
		};
		expect(
			await home.takeLease({ node: 'workflow\nnode', holdMs: 60_000, logger }),
		).toBeUndefined();
		expect(logged).toEqual([]);
	});
});
