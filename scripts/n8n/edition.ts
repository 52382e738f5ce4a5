/**
 * Which edition of the package the end-to-end tests install into n8n: the full one, or with
 * E2E_EDITION=verified the verified one (scripts/verified.mjs), installed from its own tarball as a
 * user installs it. n8n prefixes node types with the package's name, and each edition declares its
 * own credential type, so the workflows the tests build follow the edition.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import * as fullIdentity from '../../nodes/shared/transport/edition';
import * as verifiedIdentity from '../../nodes/shared/transport/edition.verified';
import { packPackage, PROJECT_ROOT } from './instance';

export type Edition = 'full' | 'verified';

function editionUnderTest(): Edition {
	const edition = process.env.E2E_EDITION || 'full';
	if (edition !== 'full' && edition !== 'verified') throw new Error(`E2E_EDITION is "${edition}": full or verified`);
	return edition;
}

export const EDITION = editionUnderTest();

const manifestFolder = EDITION === 'verified' ? join(PROJECT_ROOT, 'verified') : PROJECT_ROOT;

export const PACKAGE_NAME = (JSON.parse(readFileSync(join(manifestFolder, 'package.json'), 'utf8')) as { name: string }).name;

export const CREDENTIAL_TYPE = (EDITION === 'verified' ? verifiedIdentity : fullIdentity).CREDENTIAL_NAME;

/**
 * The edition's tarball: the one `npm test` packed (E2E_PACKAGE_TGZ, E2E_VERIFIED_TGZ), or the
 * edition built from clean and packed into `destination`.
 */
export function editionTarball(destination: string): string {
	const packed = EDITION === 'verified' ? process.env.E2E_VERIFIED_TGZ : process.env.E2E_PACKAGE_TGZ;
	if (packed) return packed;
	if (EDITION === 'full') return packPackage(destination);
	mkdirSync(destination, { recursive: true });
	const printed = execFileSync('node', [join(PROJECT_ROOT, 'scripts', 'verified.mjs'), 'pack', destination], {
		cwd: PROJECT_ROOT,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'inherit'],
	});
	return printed.trim().split('\n').pop() as string;
}

const FULL_PACKAGE_NAME = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string }).name;

interface WorkflowNode {
	type: string;
	credentials?: Record<string, unknown>;
}

/**
 * A workflow written for the full edition (examples/) as the edition under test runs it: what a
 * user changes to move a workflow from one edition to the other, the package's name in its node
 * types and the credential type its nodes name.
 */
export function inEdition<T extends { nodes: unknown[] }>(workflow: T): T {
	const nodes = (workflow.nodes as WorkflowNode[]).map((node) => {
		if (!node.type.startsWith(`${FULL_PACKAGE_NAME}.`)) return node;
		const moved: WorkflowNode = { ...node, type: `${PACKAGE_NAME}${node.type.slice(FULL_PACKAGE_NAME.length)}` };
		if (node.credentials) {
			moved.credentials = Object.fromEntries(
				Object.entries(node.credentials).map(([type, credential]) => [type === fullIdentity.CREDENTIAL_NAME ? CREDENTIAL_TYPE : type, credential]),
			);
		}
		return moved;
	});
	return { ...workflow, nodes };
}
