import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import {
	actionNode,
	CREDENTIAL_TYPE,
	EMULATOR_CREDENTIAL,
	nodeItems,
	nodeType,
	prepareN8n,
	PROJECT_ROOT,
	runError,
	type N8nHarness,
	type WorkflowDefinition,
	workersOfRun,
} from './harness';

function codeWorkflow(name: string, jsCode: string): WorkflowDefinition {
	return {
		name,
		nodes: [
			{
				id: 'd9f1c5c4-0b7e-4f0e-9f0a-000000000001',
				name: 'Start',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				id: 'd9f1c5c4-0b7e-4f0e-9f0a-000000000002',
				name: 'Code',
				type: 'n8n-nodes-base.code',
				typeVersion: 2,
				position: [220, 0],
				parameters: { jsCode },
			},
		],
		connections: { Start: { main: [[{ node: 'Code', type: 'main', index: 0 }]] } },
		settings: {},
	};
}

// A line of exactly `{` inside the data must not confuse the parsing of the output.
const ITEMS_CODE = "return [{ json: { n: 1, text: '{\\n}' } }, { json: { n: 2 } }];";
const ITEMS = [{ n: 1, text: '{\n}' }, { n: 2 }];

/** The names under which n8n should list what package.json declares, read from the sources. */
async function declaredTypes(): Promise<{ nodes: string[]; credentials: string[] }> {
	const manifest = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
		n8n: { nodes: string[]; credentials: string[] };
	};
	const instances = async (distPath: string): Promise<Array<Record<string, unknown>>> => {
		const source = join(PROJECT_ROOT, distPath.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
		const exports = (await import(source)) as Record<string, unknown>;
		return Object.values(exports)
			.filter((value): value is new () => Record<string, unknown> => typeof value === 'function')
			.map((Class) => new Class());
	};
	const all = async (paths: string[]) => (await Promise.all(paths.map(instances))).flat();
	return {
		nodes: (await all(manifest.n8n.nodes)).map((node) =>
			nodeType((node.description as { name: string }).name),
		),
		credentials: (await all(manifest.n8n.credentials)).map(
			(credential) => credential.name as string,
		),
	};
}

/**
 * The README's first workflow as its five steps build it: a Manual Trigger, Document Upload with
 * the XML as text, Upload Session Wait for Completion on the upload's session.
 */
function firstWorkflow(): WorkflowDefinition {
	const upload = actionNode('Upload', {
		resource: 'document',
		operation: 'upload',
		source: 'text',
		xml: '<Products><Product><Sku>CH-1</Sku></Product></Products>',
	});
	const wait = actionNode('Wait for Completion', {
		resource: 'uploadSession',
		operation: 'waitForCompletion',
		sessionIds: '={{ $json.sessionId }}',
	});
	return {
		name: 'A first workflow',
		nodes: [
			{
				id: 'd9f1c5c4-0b7e-4f0e-9f0a-000000000011',
				name: 'Manual Trigger',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{ id: 'd9f1c5c4-0b7e-4f0e-9f0a-000000000012', position: [220, 0], ...upload },
			{ id: 'd9f1c5c4-0b7e-4f0e-9f0a-000000000013', position: [440, 0], ...wait },
		],
		connections: {
			'Manual Trigger': { main: [[{ node: 'Upload', type: 'main', index: 0 }]] },
			Upload: { main: [[{ node: 'Wait for Completion', type: 'main', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

describe('n8n with the packed package', () => {
	let n8n: N8nHarness;

	beforeAll(async () => {
		n8n = await prepareN8n();
	});

	afterAll(async () => {
		await n8n?.stop();
	});

	test('a workflow run through the REST API hands back its run data', async () => {
		const run = await n8n.run(codeWorkflow('Items', ITEMS_CODE));

		expect(run).toMatchObject({ status: 'success', mode: 'manual' });
		expect(nodeItems(run, 'Code')).toEqual(ITEMS);
		expect(runError(run)).toBeUndefined();
		const [listed] = await n8n.server.listExecutions({ workflowId: run.workflowId });
		expect(listed).toMatchObject({ id: run.id, status: 'success' });
	});

	test('a failing workflow is reported with its error, and refused where success was expected', async () => {
		const id = await n8n.importWorkflow(
			codeWorkflow('Fails', "throw new Error('stopped on purpose');"),
		);

		const run = await n8n.executeWorkflow(id, { expect: 'failure' });

		expect(run.status).toBe('error');
		expect(runError(run)).toMatchObject({
			node: 'Code',
			message: expect.stringContaining('stopped on purpose'),
		});
		await expect(n8n.executeWorkflow(id)).rejects.toThrow(
			/status error, expected success \(Code: stopped on purpose/,
		);
	});

	test('n8n loads every node and credential of the package, and the emulator credential points at the emulator', async () => {
		const nodes = await n8n.server.request<Array<{ name: string }>>('GET', '/types/nodes.json');
		const credentials = await n8n.server.request<Array<{ name: string }>>(
			'GET',
			'/types/credentials.json',
		);
		const declared = await declaredTypes();
		expect(declared.nodes.length).toBeGreaterThan(0);
		expect(declared.credentials).toContain(CREDENTIAL_TYPE);
		expect(nodes.map((node) => node.name)).toEqual(expect.arrayContaining(declared.nodes));
		expect(credentials.map((credential) => credential.name)).toEqual(
			expect.arrayContaining(declared.credentials),
		);

		const { data } = await n8n.server.request<{ data: Array<{ id: string; name: string }> }>(
			'GET',
			'/rest/credentials',
		);
		expect(data).toEqual(expect.arrayContaining([expect.objectContaining(EMULATOR_CREDENTIAL)]));
		const { data: test } = await n8n.server.request<{ data: { status: string } }>(
			'POST',
			'/rest/credentials/test',
			{
				credentials: n8n.credential,
			},
		);
		expect(test).toMatchObject({ status: 'OK' });
		expect(n8n.emulator.stats().requests['GET /api/auth/me']).toBe(1);
	});

	// The README installs the tarball with the driver's install command (test/tools/n8n/install.test.ts),
	// which prepared this n8n's user folder from empty.
	test("the README's first workflow: one document uploaded and its session confirmed", async () => {
		const run = await n8n.run(firstWorkflow());

		const [uploaded] = nodeItems(run, 'Upload');
		expect(uploaded).toMatchObject({ sessionId: expect.any(String) });
		expect(nodeItems(run, 'Wait for Completion')).toEqual([
			{ sessionId: uploaded.sessionId, status: 'succeeded' },
		]);
		expect(n8n.emulator.stats().uploads).toBe(1);
	});
});

describe('one n8n per jest worker', () => {
	const run = (testPathPattern: string, maxWorkers = 2): number =>
		workersOfRun({ maxWorkers, rootDir: PROJECT_ROOT, testPathPattern });

	test('the whole suite: as many as jest has workers', () => {
		expect(run('')).toBe(2);
		expect(run('', 1)).toBe(1);
	});

	test('one file, or a pattern that selects one: a single n8n (jest runs that file in its own process)', () => {
		expect(run('test/e2e/harness.test.ts')).toBe(1);
		expect(run('HARNESS')).toBe(1);
		expect(run('(harness|faults)\\.test')).toBe(2);
		expect(run('no-such-file')).toBe(1);
	});
});
