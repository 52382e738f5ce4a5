/**
 * What the house needs from an edition, on the ground floor: the ports through which an edition
 * shares what several n8n processes of an account must see alike (its bucket, its known images,
 * the pollers' answers, a node's runs), reaches other hosts and encodes multipart bodies, each
 * with its default for an n8n process on its own. The edition is chosen once, at the top: each
 * node file installs its edition's value (../../edition/) with useEdition before any run, and the
 * house asks edition() for it. A new shared capability is one member here, one adapter in the
 * edition that has it, one line in that edition's value.
 */
import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import {
	processLimiterFor,
	type RateLimiter,
	type Sleep,
	type TermsDeclaration,
} from '../throttle';
import type { AnswerHome } from './answers';
import type { DirectExchange } from './egress';
import { digestOf, encodeMultipart } from './inMemoryMultipart';
import type { KnownImages } from './knownImages';
import type { FilePart, MultipartUpload, PartDigest } from './multipart';
import type { ProductMemory } from './productMemory';
import type { TakeLease } from './runLease';

export { MAX_ANSWER_AGE_MS, type AnswerHome, type KeptAnswer } from './answers';
export type { DirectAnswer, DirectExchange, DirectLookup, DirectRequest } from './egress';
export { HASHCODE, MD5 } from './hashcode';
export type { KnownImages } from './knownImages';
export {
	checkPartContentType,
	type FilePart,
	type MultipartUpload,
	type PartDigest,
	type RequestBody,
} from './multipart';
export type { ProductMemory } from './productMemory';
export type { LeaseRequest, RunLease, TakeLease } from './runLease';

export interface Edition {
	/** n8n's name of the edition's credential type (each edition declares its own). */
	credentialType: string;
	/** The limiter of the account `accountKey` for this n8n process; `declaration`: the terms the credential declares. */
	accountLimiter(
		accountKey: string,
		declaration: TermsDeclaration,
		credentials: ICredentialDataDecryptedObject,
		sleep: Sleep,
	): RateLimiter;
	/**
	 * The known images of a customer node (`scope`, of the password holder `holder`) that every
	 * process of the account shares, where the account has a place for them.
	 */
	sharedKnownImages(
		credentials: ICredentialDataDecryptedObject,
		holder: string,
		scope: string,
		ageMs: number,
	): KnownImages | undefined;
	/** What a run that remembers its known images in the process only is told it could do instead ('' for nothing). */
	knownImagesAdvice: string;
	/**
	 * The memory per product of a node (`scope`, of the password holder `holder`) that every process
	 * of the account shares, where the account has a place for it.
	 */
	productMemory(
		credentials: ICredentialDataDecryptedObject,
		holder: string,
		scope: string,
	): ProductMemory | undefined;
	/** Where the pollers' answers are kept for every process of the account, where it has a place. */
	answerHome(credentials: ICredentialDataDecryptedObject): AnswerHome | undefined;
	/** Keeps the runs of a node apart across the processes of an instance. */
	takeLease: TakeLease;
	/** A client of the edition's own for hosts that are not the service; none: n8n's request helper. */
	exchangeDirectly?: DirectExchange;
	/**
	 * The proxy n8n sends a request to `url` through, as it may be shown (without its password), where
	 * the edition can tell; none: no proxy, or the edition cannot read n8n's settings.
	 */
	proxyOf?(url: URL): string | undefined;
	/** A multipart body of `parts`, to be sent by every attempt of one request. */
	encodeMultipart(parts: FilePart[]): MultipartUpload;
	/** Reads a part once to learn its md5 and length. */
	digestOf(part: FilePart): Promise<PartDigest>;
}

/** An n8n process on its own: nothing shared with other processes, bodies built in memory. */
export const PROCESS_ONLY: Omit<Edition, 'credentialType'> = {
	accountLimiter: (accountKey, declaration, _credentials, sleep) =>
		processLimiterFor(accountKey, declaration, sleep),
	sharedKnownImages: () => undefined,
	knownImagesAdvice: '',
	productMemory: () => undefined,
	answerHome: () => undefined,
	takeLease: () => undefined,
	encodeMultipart,
	digestOf,
};

let installed: Edition | undefined;

/** Installs the edition the nodes of this package run with (the node files do, as they load). */
export function useEdition(edition: Edition): void {
	installed = edition;
}

/** The installed edition. */
export function edition(): Edition {
	if (!installed)
		throw new Error(
			'No edition of the package is installed: a node file installs it as it loads (useEdition)',
		);
	return installed;
}
