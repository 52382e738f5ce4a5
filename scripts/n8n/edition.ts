/**
 * Which edition of the package the end-to-end tests install into n8n: the full one, or with
 * E2E_EDITION=verified the verified one (scripts/verified.mjs), installed from its own tarball as a
 * user installs it. n8n prefixes node types with the package's name, and each edition declares its
 * own credential type, so the workflows the tests build follow the edition.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import * as fullIdentity from '../../credentials/edition';
import * as verifiedIdentity from '../../credentials/edition.verified';
import { packPackage, PROJECT_ROOT } from './instance';

export type Edition = 'full' | 'verified';

/** What n8n knows an edition by: its package's name (its node types' prefix) and its credential type. */
export interface EditionIdentity {
	packageName: string;
	credentialType: string;
}

export function identityOf(edition: Edition): EditionIdentity {
	const folder = edition === 'verified' ? join(PROJECT_ROOT, 'verified') : PROJECT_ROOT;
	return {
		packageName: (
			JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { name: string }
		).name,
		credentialType: (edition === 'verified' ? verifiedIdentity : fullIdentity).CREDENTIAL_NAME,
	};
}

function editionUnderTest(): Edition {
	const edition = process.env.E2E_EDITION || 'full';
	if (edition !== 'full' && edition !== 'verified')
		throw new Error(`E2E_EDITION is "${edition}": full or verified`);
	return edition;
}

export const EDITION = editionUnderTest();

export const { packageName: PACKAGE_NAME, credentialType: CREDENTIAL_TYPE } = identityOf(EDITION);

/**
 * An edition's tarball: the one `npm test` packed (E2E_PACKAGE_TGZ, E2E_VERIFIED_TGZ), or the
 * edition built from clean and packed into `destination`.
 */
export function editionTarball(destination: string, edition: Edition = EDITION): string {
	const packed =
		edition === 'verified' ? process.env.E2E_VERIFIED_TGZ : process.env.E2E_PACKAGE_TGZ;
	if (packed) return packed;
	if (edition === 'full') return packPackage(destination);
	mkdirSync(destination, { recursive: true });
	const printed = execFileSync(
		'node',
		[join(PROJECT_ROOT, 'scripts', 'verified.mjs'), 'pack', destination],
		{
			cwd: PROJECT_ROOT,
			encoding: 'utf8',
			stdio: ['ignore', 'pipe', 'inherit'],
		},
	);
	return printed.trim().split('\n').pop() as string;
}

interface WorkflowNode {
	type: string;
	credentials?: Record<string, unknown>;
}

/**
 * A workflow written for one edition as another runs it (by default: written for the full edition,
 * as in examples/, run by the edition under test). It is what a user changes to move a workflow from
 * one edition to the other: the package's name in its node types, the credential type its nodes name.
 */
export function inEdition<T extends { nodes: unknown[] }>(
	workflow: T,
	to: Edition = EDITION,
	from: Edition = 'full',
): T {
	const source = identityOf(from);
	const target = identityOf(to);
	const nodes = (workflow.nodes as WorkflowNode[]).map((node) => {
		if (!node.type.startsWith(`${source.packageName}.`)) return node;
		const moved: WorkflowNode = {
			...node,
			type: `${target.packageName}${node.type.slice(source.packageName.length)}`,
		};
		if (node.credentials) {
			moved.credentials = Object.fromEntries(
				Object.entries(node.credentials).map(([type, credential]) => [
					type === source.credentialType ? target.credentialType : type,
					credential,
				]),
			);
		}
		return moved;
	});
	return { ...workflow, nodes };
}
