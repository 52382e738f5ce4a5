/**
 * The node as a tool of n8n's AI Agent, in a real n8n: an OpenAI-compatible chat model stub plays
 * the model and calls Get Result and Find Image through the node; the test reads what n8n offered
 * the model as tools and what the agent answered.
 */
import { createHash } from 'node:crypto';

import { call, multipart, putXml } from '../../scripts/emulator/client';
import {
	answer,
	callTool,
	startChatModelStub,
	STUB_MODEL,
	toolNamed,
	toolResults,
	type ChatModelStub,
} from './chat-model-stub';
import {
	CREDENTIAL_TYPE,
	EMULATOR_CREDENTIAL,
	nodeItems,
	nodeType,
	prepareN8n,
	type N8nHarness,
	type WorkflowDefinition,
} from './harness';

const OPENAI_CREDENTIAL_NAME = 'Chat model stub';
const IMAGE = Buffer.from('an image of a chair, as far as the emulator cares');
const IMAGE_MD5 = createHash('md5').update(IMAGE).digest('hex');

/** The first output item of a tool, as the agent handed its result to the model (JSON text). */
function firstResult(text: string): Record<string, unknown> {
	const parsed = JSON.parse(text) as unknown;
	return (Array.isArray(parsed) ? parsed[0] : parsed) as Record<string, unknown>;
}

function toolNode(name: string, parameters: Record<string, unknown>, position: [number, number]) {
	return {
		name,
		type: nodeType('productDataIntegrationTool'),
		typeVersion: 1,
		position,
		parameters,
		credentials: {
			[CREDENTIAL_TYPE]: { id: EMULATOR_CREDENTIAL.id, name: EMULATOR_CREDENTIAL.name },
		},
	};
}

function agentWorkflow(
	prompt: string,
	openAiCredential: { id: string; name: string },
): WorkflowDefinition {
	return {
		name: 'Agent with the node as tools',
		nodes: [
			{
				name: 'Start',
				type: 'n8n-nodes-base.manualTrigger',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
			{
				name: 'Agent',
				type: '@n8n/n8n-nodes-langchain.agent',
				typeVersion: 3.1,
				position: [300, 0],
				parameters: { promptType: 'define', text: prompt, options: {} },
			},
			{
				name: 'Chat Model',
				type: '@n8n/n8n-nodes-langchain.lmChatOpenAi',
				typeVersion: 1.2,
				position: [200, 300],
				parameters: { model: { __rl: true, mode: 'id', value: STUB_MODEL }, options: {} },
				credentials: { openAiApi: openAiCredential },
			},
			toolNode(
				'Get Result',
				{
					resource: 'uploadSession',
					operation: 'getResult',
					sessionId:
						"={{ $fromAI('sessionId', 'The session ID (a GUID) an upload returned', 'string') }}",
					options: { includeErrorMessage: true },
				},
				[400, 300],
			),
			toolNode(
				'Find Image',
				{
					resource: 'image',
					operation: 'find',
					searchBy: 'md5',
					md5: "={{ $fromAI('md5', 'MD5 hash of the original image file', 'string') }}",
				},
				[600, 300],
			),
		],
		connections: {
			Start: { main: [[{ node: 'Agent', type: 'main', index: 0 }]] },
			'Chat Model': { ai_languageModel: [[{ node: 'Agent', type: 'ai_languageModel', index: 0 }]] },
			'Get Result': { ai_tool: [[{ node: 'Agent', type: 'ai_tool', index: 0 }]] },
			'Find Image': { ai_tool: [[{ node: 'Agent', type: 'ai_tool', index: 0 }]] },
		},
		settings: { executionOrder: 'v1' },
	};
}

describe('the node as a tool of the AI Agent', () => {
	let n8n: N8nHarness;
	let model: ChatModelStub | undefined;

	beforeAll(async () => {
		n8n = await prepareN8n();
	});

	afterAll(async () => {
		await model?.close();
		await n8n?.stop();
	});

	test('the agent calls Get Result and Find Image and answers from their results', async () => {
		const upload = await putXml(
			n8n.emulator,
			'<Products><!--emulator:fail--><Product/></Products>',
		);
		const sessionId = upload.text.replace(/"/g, '').trim();
		const image = multipart([{ fileName: 'chair.png', contentType: 'image/png', data: IMAGE }]);
		const images = await call(n8n.emulator, 'POST', '/api/images', {
			headers: { 'content-type': image.contentType },
			body: image.body,
		});
		expect(images.status).toBe(200);

		model = await startChatModelStub([
			(request) => callTool(request, 'Get Result', { sessionId }),
			(request) => callTool(request, 'Find Image', { md5: IMAGE_MD5 }),
			(request) => {
				const [result, found] = toolResults(request).map(firstResult);
				return answer(
					`Upload ${String(result.sessionId)} ${String(result.status)}: ${String(result.errorMessage)} ` +
						`Image ${IMAGE_MD5} has the hashcode ${String(found.hashcode)}.`,
				);
			},
		]);
		const openAiCredential = {
			id: await n8n.server.createCredential({
				name: OPENAI_CREDENTIAL_NAME,
				type: 'openAiApi',
				data: { apiKey: 'stub-key', url: model.url },
			}),
			name: OPENAI_CREDENTIAL_NAME,
		};

		const run = await n8n.run(
			agentWorkflow(
				`What became of upload ${sessionId}, and is the image with MD5 ${IMAGE_MD5} there?`,
				openAiCredential,
			),
		);

		// What n8n offered the model: one tool per node, its input schema made of the $fromAI() fields.
		const [first] = model.requests;
		expect(toolNamed(first, 'Get Result').function.parameters).toMatchObject({
			type: 'object',
			properties: {
				sessionId: { type: 'string', description: 'The session ID (a GUID) an upload returned' },
			},
			required: ['sessionId'],
		});
		expect(toolNamed(first, 'Find Image').function.parameters).toMatchObject({
			type: 'object',
			properties: { md5: { type: 'string', description: 'MD5 hash of the original image file' } },
			required: ['md5'],
		});
		expect(toolNamed(first, 'Get Result').function.description).toEqual(
			expect.stringMatching(/\S/),
		);

		// The node ran as the tool: the service was asked, and the results reached the model.
		expect(model.requests).toHaveLength(3);
		const [result, found] = toolResults(model.requests[2]).map(firstResult);
		expect(result).toMatchObject({
			sessionId,
			status: 'failed',
			errorMessage: 'Processing of the document ended with 1 error(s).',
		});
		expect(found).toMatchObject({
			found: true,
			md5: IMAGE_MD5,
			hashcode: expect.stringMatching(/^[0-9a-f]{32}$/),
		});
		expect(n8n.emulator.stats().requests['GET /api/status/{id}/result']).toBe(1);

		expect(nodeItems(run, 'Agent')[0]).toEqual({
			output:
				`Upload ${sessionId} failed: Processing of the document ended with 1 error(s). ` +
				`Image ${IMAGE_MD5} has the hashcode ${String(found.hashcode)}.`,
		});
	});
});
