/**
 * What a quiet night costs per photo: Image Upload by Photo URL with every photo known to the
 * workflow (Known MD5, Known Hashcode and Known Version given back, the Photo Version unchanged),
 * so no photo is downloaded and no request is sent; the parameters are those of the Upload Photo of
 * the nightly-sync example's page workflow. The time is n8n-core's engine running the node in this
 * process, three ways in each round: the node as it is (its parameters read from the item where
 * they only name a property of it), the node the way it read them before (every expression
 * evaluated by n8n for every item), and a peer that only reads the same parameters once per item
 * through n8n and hands the item on. Prints one JSON line per round:
 *   {"items","nowMsPerItem","beforeMsPerItem","peerMsPerItem","ratio","imagesSent"}
 * ratio = now / before.
 *   BENCH_ITEMS (20000)  BENCH_ROUNDS (3)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeParameters,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';

// '.node.js' because tsx would resolve '.node' to the codex file next to it (.node.json).
import { ProductDataIntegration } from '../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { RunParameters } from '../nodes/ProductDataIntegration/actions/runParameters';
import { startEmulator } from '../scripts/emulator';
import { emulatorCredentials, runNode } from '../scripts/n8n/in-process';
import { PROJECT_ROOT } from '../scripts/n8n/instance';

function setting(name: string, fallback: number): number {
	const raw = process.env[name];
	const value = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
	if (!Number.isFinite(value) || value < 1) throw new Error(`${name} must be a number >= 1`);
	return Math.floor(value);
}

const ITEMS = setting('BENCH_ITEMS', 20_000);
const ROUNDS = setting('BENCH_ROUNDS', 3);

/** The parameters of the nightly-sync page workflow's Upload Photo, as a user imports it. */
function examplesUploadPhoto(): INodeParameters {
	const { nodes } = JSON.parse(
		readFileSync(join(PROJECT_ROOT, 'examples', 'nightly-sync-page.json'), 'utf8'),
	) as { nodes: Array<{ name: string; parameters: INodeParameters }> };
	const node = nodes.find((candidate) => candidate.name === 'Upload Photo');
	if (!node) throw new Error('examples/nightly-sync-page.json has no node "Upload Photo"');
	return node.parameters;
}

const UPLOAD = examplesUploadPhoto();

const planOfRun = RunParameters.prototype['plan'];

/**
 * The way before, for this benchmark only: a parameter without an expression read once per run,
 * every other one evaluated by n8n for every item.
 */
function everyExpressionThroughN8n(on: boolean): void {
	RunParameters.prototype['plan'] = on
		? function (this: RunParameters, ...args: Parameters<typeof planOfRun>) {
				const plan = planOfRun.apply(this, args);
				return plan.kind === 'fixed' ? plan : { kind: 'n8n' };
			}
		: planOfRun;
}

/** The peer: the same parameters, each read once per item, and nothing else. */
class ReadParametersOnly implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Read Parameters Only',
		name: 'readParametersOnly',
		group: ['transform'],
		version: 1,
		description: 'Reads its parameters per item',
		defaults: { name: 'Read Parameters Only' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [
			{ displayName: 'Resource', name: 'resource', type: 'string', default: '' },
			{ displayName: 'Operation', name: 'operation', type: 'string', default: '' },
			{ displayName: 'Images From', name: 'imagesFrom', type: 'string', default: '' },
			{ displayName: 'Photo URL', name: 'photoUrl', type: 'string', default: '' },
			{ displayName: 'Photo Version', name: 'photoVersion', type: 'string', default: '' },
			{
				displayName: 'Options',
				name: 'options',
				type: 'collection',
				default: {},
				options: [
					{
						displayName: 'Allowed Internal Hosts',
						name: 'allowedInternalHosts',
						type: 'string',
						default: '',
					},
					{ displayName: 'Known MD5', name: 'knownMd5', type: 'string', default: '' },
					{ displayName: 'Known Hashcode', name: 'knownHashcode', type: 'string', default: '' },
					{ displayName: 'Known Version', name: 'knownVersion', type: 'string', default: '' },
				],
			},
		],
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		return [
			items.map((item, itemIndex) => {
				for (const name of ['imagesFrom', 'photoUrl', 'photoVersion', 'options'])
					this.getNodeParameter(name, itemIndex);
				return { json: item.json, pairedItem: { item: itemIndex } };
			}),
		];
	}
}

function knownPhotos(): INodeExecutionData[] {
	return Array.from({ length: ITEMS }, (_, n) => ({
		json: {
			url: `https://shop.example/photo/p${n}.jpg`,
			updatedAt: 'v1',
			knownMd5: n.toString(16).padStart(32, '0'),
			knownHashcode: `h${n}`,
			knownVersion: 'v1',
		},
	}));
}

async function timed(run: () => Promise<number>): Promise<number> {
	const started = process.hrtime.bigint();
	const outputs = await run();
	if (outputs !== ITEMS) throw new Error(`${outputs} output items for ${ITEMS} input items`);
	return Number(process.hrtime.bigint() - started) / 1e6 / ITEMS;
}

async function main(): Promise<void> {
	const emulator = await startEmulator({ onlyImages: true });
	const credentials = emulatorCredentials(emulator);
	const upload = new ProductDataIntegration();
	const peer = new ReadParametersOnly();
	try {
		for (let round = 0; round < ROUNDS; round++) {
			const items = knownPhotos();
			const imagesBefore = emulator.stats().images;
			const uploadMsPerItem = async (theWayBefore: boolean) => {
				everyExpressionThroughN8n(theWayBefore);
				try {
					return await timed(async () => {
						const result = await runNode({ node: upload, parameters: UPLOAD, items, credentials });
						if (result.error) throw new Error(`The run failed: ${result.error.message}`);
						return result.output[0].length;
					});
				} finally {
					everyExpressionThroughN8n(false);
				}
			};
			const beforeMsPerItem = await uploadMsPerItem(true);
			const nowMsPerItem = await uploadMsPerItem(false);
			const peerMsPerItem = await timed(async () => {
				const result = await runNode({ node: peer, parameters: UPLOAD, items });
				if (result.error) throw new Error(`The peer failed: ${result.error.message}`);
				return result.output[0].length;
			});
			console.log(
				JSON.stringify({
					items: ITEMS,
					nowMsPerItem: Number(nowMsPerItem.toFixed(3)),
					beforeMsPerItem: Number(beforeMsPerItem.toFixed(3)),
					peerMsPerItem: Number(peerMsPerItem.toFixed(3)),
					ratio: Number((nowMsPerItem / beforeMsPerItem).toFixed(2)),
					imagesSent: emulator.stats().images - imagesBefore,
				}),
			);
		}
	} finally {
		await emulator.close();
	}
}

void main().catch((error: unknown) => {
	console.error(error);
	process.exitCode = 1;
});
