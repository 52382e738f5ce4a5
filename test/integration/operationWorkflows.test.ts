/**
 * The happy path of every operation of the action node, one workflow per case in ./workflows/: a
 * Manual Trigger whose pinned data is the input, then a line of the node's steps. Each step runs in
 * n8n-core's engine against the emulator with the output of the step before it, and must end
 * without error with as many items as the workflow pins for it, each holding the pinned fields
 * (n8n's own node tests keep expected output as pinned data alike).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { INodeExecutionData, IWorkflowBase } from 'n8n-workflow';

import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { closeStores } from '../../nodes/shared/fullEdition/sharedRegistry';
import { runNode } from '../../scripts/n8n/in-process';
import { startRedis, type RedisServer } from '../../scripts/redis';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';

const node = new ProductDataIntegration();
const NODE_TYPE = 'n8n-nodes-product-data-integration.productDataIntegration';
const FOLDER = join(__dirname, 'workflows');
const ACTIONS = join(__dirname, '..', '..', 'nodes', 'ProductDataIntegration', 'actions');

type CaseWorkflow = Pick<IWorkflowBase, 'name' | 'nodes' | 'connections'> & {
	pinData?: Record<string, INodeExecutionData[]>;
};

const cases = readdirSync(FOLDER)
	.filter((file) => file.endsWith('.json'))
	.sort()
	.map((file) => JSON.parse(readFileSync(join(FOLDER, file), 'utf8')) as CaseWorkflow);

/** The workflow's nodes from its Manual Trigger on, each connected to the one before. */
function stepsOf(workflow: CaseWorkflow): CaseWorkflow['nodes'] {
	const byName = new Map(workflow.nodes.map((step) => [step.name, step]));
	const steps = [workflow.nodes.find(({ type }) => type === 'n8n-nodes-base.manualTrigger')];
	for (let step = steps[0]; step; ) {
		const next = workflow.connections[step.name]?.main?.[0]?.[0]?.node;
		step = next === undefined ? undefined : byName.get(next);
		if (step) steps.push(step);
	}
	if (steps.some((step) => step === undefined)) throw new Error(`${workflow.name}: no trigger`);
	return steps as CaseWorkflow['nodes'];
}

/** A case that collects changed products keeps them in the account's Redis, as queue mode has one. */
function needsRedis(workflow: CaseWorkflow): boolean {
	return workflow.nodes.some(({ parameters }) => parameters.sendChangedProducts === 'collected');
}

describe('every operation of the action node: its happy path as a workflow', () => {
	const { credentials } = useEmulator(FAST_BUCKET);
	let redis: RedisServer | undefined;

	afterAll(async () => {
		await closeStores();
		await redis?.stop();
	});

	// Each case starts as in a fresh n8n: no image is known from an earlier case's upload.
	beforeEach(async () => {
		const { error } = await runNode({
			node,
			parameters: { resource: 'image', operation: 'forgetKnownImages', options: {} },
			credentials: credentials(),
		});
		expect(error).toBeUndefined();
	});

	it('has a workflow for every operation', () => {
		const operations = readdirSync(ACTIONS, { recursive: true, encoding: 'utf8' })
			.filter((file) => file.endsWith('.operation.ts'))
			.map((file) => file.replace(/\.operation\.ts$/, '').replace(/\\/g, '/'));
		const covered = cases.flatMap(({ nodes }) =>
			nodes
				.filter(({ type }) => type === NODE_TYPE)
				.map(({ parameters }) => `${String(parameters.resource)}/${String(parameters.operation)}`),
		);
		expect(operations.length).toBeGreaterThan(0);
		for (const operation of operations) expect(covered).toContain(operation);
	});

	it.each(cases.map((workflow) => [workflow.name, workflow] as const))(
		'%s',
		async (_name, workflow) => {
			const [trigger, ...steps] = stepsOf(workflow);
			expect(steps.length).toBeGreaterThan(0);
			if (needsRedis(workflow)) redis ??= await startRedis();
			const sharing =
				needsRedis(workflow) && redis
					? { rateLimitSharing: 'redis', redisHost: '127.0.0.1', redisPort: redis.port }
					: {};
			let items = workflow.pinData?.[trigger.name] ?? [{ json: {} }];
			for (const step of steps) {
				expect(step.type).toBe(NODE_TYPE);
				const { output, error } = await runNode({
					node,
					parameters: step.parameters,
					items,
					credentials: credentials(sharing),
				});
				expect({ step: step.name, error }).toEqual({ step: step.name, error: undefined });
				items = output[0];
				const expected = workflow.pinData?.[step.name];
				if (expected)
					expect({ step: step.name, items }).toMatchObject({ step: step.name, items: expected });
			}
		},
	);
});
