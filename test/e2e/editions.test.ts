/**
 * Both editions installed in one n8n, as a user may have them: n8n tells their node types apart by
 * the package's name and their credentials by their own type names, so neither replaces anything of
 * the other, and a workflow can use both, each node with the credential of its own edition.
 */
import { identityOf, inEdition, EDITION, type Edition } from '../../scripts/n8n/edition';
import { actionNode, chainWorkflow, nodeItems, prepareN8n, type N8nHarness } from './harness';

const OTHER: Edition = EDITION === 'full' ? 'verified' : 'full';

let n8n: N8nHarness;

beforeAll(async () => {
	n8n = await prepareN8n({ alsoInstall: OTHER });
}, 600_000);

afterAll(async () => {
	await n8n?.stop();
});

test('each edition uploads with its own credential type, side by side in one workflow', async () => {
	const other = identityOf(OTHER);
	const otherCredential = { name: `Product Data Integration (emulator, ${OTHER} edition)` };
	const otherId = await n8n.server.createCredential({
		...otherCredential,
		type: other.credentialType,
		data: n8n.credential.data,
	});
	const upload = { resource: 'document', operation: 'upload', source: 'text', xml: '<Products/>' };
	const workflow = chainWorkflow(
		'Both editions',
		[{ json: {} }],
		[
			actionNode('Upload Here', upload),
			actionNode('Upload Other', upload, {
				credential: { id: otherId, name: otherCredential.name },
			}),
		],
	);
	const nodes = workflow.nodes as Array<{ name: string }>;
	const moved = nodes.map((node) =>
		node.name === 'Upload Other' ? inEdition({ nodes: [node] }, OTHER, EDITION).nodes[0] : node,
	);
	expect(moved.find((node) => node.name === 'Upload Other')).toMatchObject({
		type: `${other.packageName}.productDataIntegration`,
		credentials: { [other.credentialType]: { id: otherId } },
	});

	const run = await n8n.run({ ...workflow, nodes: moved });

	expect(nodeItems(run, 'Upload Here')[0]).toMatchObject({ sessionId: expect.any(String) });
	expect(nodeItems(run, 'Upload Other')[0]).toMatchObject({ sessionId: expect.any(String) });
	expect(n8n.emulator.stats().uploads).toBe(2);
});
