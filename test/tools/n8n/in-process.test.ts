import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type {
	IAuthenticateGeneric,
	ICredentialType,
	IDataObject,
	IExecuteFunctions,
	ILoadOptionsFunctions,
	INodeExecutionData,
	INodeProperties,
	INodePropertyOptions,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
	NodeConnectionType,
} from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { ProductDataIntegration } from '../../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { startEmulator, type Emulator } from '../../../scripts/emulator';
import {
	binaryItem,
	clearLoggedLines,
	emulatorCredentials,
	getLoggedLines,
	registerCredentialType,
	runLoadOptions,
	runNode,
	runPoll,
	setBinaryDataMode,
} from '../../../scripts/n8n/in-process';

const MAIN = 'main' as NodeConnectionType;

// A credential type with a declarative authenticate, like the package's own: header, basic auth
// and query values all come from `={{$credentials.x}}` expressions.
class HarnessTestApi implements ICredentialType {
	name = 'harnessTestApi';

	displayName = 'Harness Test API';

	properties: INodeProperties[] = [
		{ displayName: 'Base URL', name: 'baseUrl', type: 'string', default: '' },
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
		},
		{ displayName: 'User', name: 'user', type: 'string', default: '' },
		{
			displayName: 'Password',
			name: 'password',
			type: 'string',
			typeOptions: { password: true },
			default: '',
		},
		{ displayName: 'Tenant', name: 'tenant', type: 'string', default: 'tenant-default' },
		{ displayName: 'Advanced', name: 'advanced', type: 'boolean', default: false },
		{
			displayName: 'Hidden Unless Advanced',
			name: 'hiddenUnlessAdvanced',
			type: 'number',
			default: 7,
			displayOptions: { show: { advanced: [true] } },
		},
	];

	authenticate: IAuthenticateGeneric = {
		type: 'generic',
		properties: {
			headers: { 'X-Api-Key': '={{$credentials.apiKey}}' },
			auth: { username: '={{$credentials.user}}', password: '={{$credentials.password}}' },
			qs: { tenant: '={{$credentials.tenant}}' },
		},
	};
}

registerCredentialType(new HarnessTestApi());

function description(
	name: string,
	overrides: Partial<INodeTypeDescription> = {},
): INodeTypeDescription {
	return {
		displayName: name,
		name,
		group: ['output'],
		version: 1,
		description: 'Test node',
		defaults: { name },
		inputs: [MAIN],
		outputs: [MAIN],
		credentials: [{ name: 'harnessTestApi', required: true }],
		properties: [{ displayName: 'Path', name: 'path', type: 'string', default: '/echo' }],
		...overrides,
	};
}

/** Calls the test server once per item through n8n's httpRequestWithAuthentication. */
class RequestNode implements INodeType {
	description = description('harnessRequest');

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const { baseUrl, ...credentials } = await this.getCredentials('harnessTestApi');
		const output: INodeExecutionData[] = [];
		for (let itemIndex = 0; itemIndex < this.getInputData().length; itemIndex++) {
			try {
				const path = this.getNodeParameter('path', itemIndex) as string;
				const response = (await this.helpers.httpRequestWithAuthentication.call(
					this,
					'harnessTestApi',
					{
						method: 'GET',
						url: `${baseUrl as string}${path}`,
						json: true,
					},
				)) as IDataObject;
				output.push({
					json: { response, credentials, executionId: this.getExecutionId() },
					pairedItem: { item: itemIndex },
				});
			} catch (error) {
				if (!this.continueOnFail()) throw error;
				output.push({ json: { error: (error as Error).message }, pairedItem: { item: itemIndex } });
			}
		}
		return [output];
	}
}

/** Reads each item's binary both ways n8n offers and writes a transformed copy back. */
class BinaryNode implements INodeType {
	description = description('harnessBinary', { credentials: [], properties: [] });

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const items = this.getInputData();
		const output: INodeExecutionData[] = [];
		for (let itemIndex = 0; itemIndex < items.length; itemIndex++) {
			const binary = this.helpers.assertBinaryData(itemIndex, 'data');
			const buffer = await this.helpers.getBinaryDataBuffer(itemIndex, 'data');
			let streamed: string | null = null;
			let metadata: IDataObject | null = null;
			if (binary.id) {
				const chunks: Buffer[] = [];
				for await (const chunk of await this.helpers.getBinaryStream(binary.id))
					chunks.push(chunk as Buffer);
				streamed = Buffer.concat(chunks).toString();
				const { fileName, mimeType, fileSize } = await this.helpers.getBinaryMetadata(binary.id);
				metadata = { fileName, mimeType, fileSize };
			}
			const upper = await this.helpers.prepareBinaryData(
				Buffer.from(buffer.toString().toUpperCase()),
				`upper-${binary.fileName ?? 'file'}`,
				binary.mimeType,
			);
			output.push({
				json: {
					text: buffer.toString(),
					streamed,
					metadata,
					fileName: binary.fileName,
					hasId: Boolean(binary.id),
				},
				binary: { data: upper },
				pairedItem: { item: itemIndex },
			});
		}
		return [output];
	}
}

/** Fails its first run in every execution: n8n's Retry On Fail then runs it again. */
const attemptsByExecution = new Map<string, number>();

class FlakyNode implements INodeType {
	description = description('harnessFlaky', { credentials: [], properties: [] });

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const executionId = this.getExecutionId();
		const attempt = (attemptsByExecution.get(executionId) ?? 0) + 1;
		attemptsByExecution.set(executionId, attempt);
		if (attempt === 1) throw new NodeOperationError(this.getNode(), 'first attempt fails');
		return [
			this.getInputData().map((item, index) => ({
				json: { ...item.json, attempt },
				pairedItem: { item: index },
			})),
		];
	}
}

class LoggingNode implements INodeType {
	description = description('harnessLogging', { credentials: [], properties: [] });

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		this.logger.info('node logged', { nested: { deeper: { value: 'visible-in-log' } } });
		return [this.getInputData()];
	}
}

class OptionsNode implements INodeType {
	description = description('harnessOptions');

	methods = {
		loadOptions: {
			async getThings(this: ILoadOptionsFunctions): Promise<INodePropertyOptions[]> {
				const { baseUrl } = await this.getCredentials('harnessTestApi');
				const path = this.getCurrentNodeParameter('path') as string;
				const response = (await this.helpers.httpRequestWithAuthentication.call(
					this,
					'harnessTestApi',
					{
						method: 'GET',
						url: `${baseUrl as string}${path}`,
						json: true,
					},
				)) as { headers: IDataObject };
				return [{ name: String(response.headers['x-api-key']), value: path }];
			},
		},
	};

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

/** Counts polls in its static data and emits on every second one. */
class CountingTrigger implements INodeType {
	description = description('harnessCountingTrigger', {
		group: ['trigger'],
		inputs: [],
		polling: true,
	});

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		const state = this.getWorkflowStaticData('node');
		const polls = ((state.polls as number | undefined) ?? 0) + 1;
		state.polls = polls;
		const { baseUrl } = await this.getCredentials('harnessTestApi');
		if (baseUrl === 'fail') throw new NodeOperationError(this.getNode(), 'poll failed');
		if (this.getMode() === 'manual') return [[{ json: { sample: true, polls } }]];
		return polls % 2 === 0 ? [[{ json: { polls } }]] : null;
	}
}

interface SeenRequest {
	url: string;
	headers: IncomingMessage['headers'];
	/** Whether the client closed the connection before the server answered. */
	closedEarly: Promise<boolean>;
}

describe('n8n harness', () => {
	let server: Server;
	let baseUrl: string;
	const seen: SeenRequest[] = [];
	let hangingRequest: Promise<SeenRequest>;
	let onHangingRequest: (request: SeenRequest) => void;

	beforeAll(async () => {
		server = createServer((req, res) => {
			const closedEarly = once(res, 'close').then(() => !res.writableEnded);
			const request: SeenRequest = { url: req.url ?? '', headers: req.headers, closedEarly };
			seen.push(request);
			if (req.url?.startsWith('/hang')) {
				onHangingRequest(request);
				return;
			}
			if (req.url?.startsWith('/fail')) {
				res
					.writeHead(500, { 'Content-Type': 'application/json' })
					.end('{"message":"server says no"}');
				return;
			}
			res.writeHead(200, { 'Content-Type': 'application/json' });
			res.end(JSON.stringify({ url: req.url, headers: req.headers }));
		});
		server.listen(0, '127.0.0.1');
		await once(server, 'listening');
		baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});

	beforeEach(() => {
		seen.length = 0;
		hangingRequest = new Promise((resolve) => {
			onHangingRequest = resolve;
		});
	});

	afterAll(async () => {
		server.closeAllConnections();
		server.close();
		await once(server, 'close');
	});

	const credentials = () => ({ baseUrl, apiKey: 'key-123', user: 'alice', password: 's3cret' });

	it('applies the declarative authenticate of the credential type to real HTTP requests', async () => {
		const { output, error } = await runNode({
			node: new RequestNode(),
			parameters: { path: '/echo?x=1' },
			credentials: credentials(),
		});

		expect(error).toBeUndefined();
		expect(seen).toHaveLength(1);
		expect(seen[0].headers['x-api-key']).toBe('key-123');
		expect(seen[0].headers.authorization).toBe(
			`Basic ${Buffer.from('alice:s3cret').toString('base64')}`,
		);
		expect(new URL(seen[0].url, baseUrl).searchParams.get('tenant')).toBe('tenant-default');
		expect(new URL(seen[0].url, baseUrl).searchParams.get('x')).toBe('1');
		expect(output[0]).toHaveLength(1);
		expect(output[0][0].pairedItem).toEqual({ item: 0 });
	});

	it('hands nodes the credential as n8n does: defaults filled in, hidden fields dropped', async () => {
		const { output } = await runNode({
			node: new RequestNode(),
			parameters: {},
			credentials: { ...credentials(), hiddenUnlessAdvanced: 99 },
		});

		const seenCredentials = output[0][0].json.credentials as IDataObject;
		expect(seenCredentials.tenant).toBe('tenant-default');
		expect(seenCredentials.advanced).toBe(false);
		expect(seenCredentials).not.toHaveProperty('hiddenUnlessAdvanced');
	});

	it('runs one request per input item and keeps the execution id per run', async () => {
		const items = [{ json: { n: 1 } }, { json: { n: 2 } }, { json: { n: 3 } }];
		const first = await runNode({
			node: new RequestNode(),
			parameters: {},
			credentials: credentials(),
			items,
		});
		const second = await runNode({
			node: new RequestNode(),
			parameters: {},
			credentials: credentials(),
			items,
		});
		const fixed = await runNode({
			node: new RequestNode(),
			parameters: {},
			credentials: credentials(),
			items,
			executionId: 'execution-42',
		});

		expect(seen).toHaveLength(9);
		const ids = (run: typeof first) => new Set(run.output[0].map((item) => item.json.executionId));
		expect(ids(first).size).toBe(1);
		expect(ids(second).size).toBe(1);
		expect([...ids(first)][0]).not.toBe([...ids(second)][0]);
		expect([...ids(fixed)]).toEqual(['execution-42']);
	});

	it('stops on an error unless continueOnFail is set, then yields error items paired to their input', async () => {
		const items = [{ json: {} }, { json: {} }];
		const stopped = await runNode({
			node: new RequestNode(),
			parameters: { path: '/fail' },
			credentials: credentials(),
			items,
		});
		expect(stopped.output).toEqual([]);
		expect(stopped.error).toMatchObject({
			name: 'NodeApiError',
			httpCode: '500',
			description: 'server says no',
		});
		expect(seen).toHaveLength(1);

		const continued = await runNode({
			node: new RequestNode(),
			parameters: { path: '/fail' },
			credentials: credentials(),
			items,
			continueOnFail: true,
		});
		expect(continued.error).toBeUndefined();
		expect(continued.output[0]).toHaveLength(2);
		expect(continued.output[0].map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		expect(continued.output[0][1].json.error).toBe(stopped.error?.message);
	});

	it('re-runs the node within one execution with Retry On Fail', async () => {
		const { output, error } = await runNode({
			node: new FlakyNode(),
			parameters: {},
			items: [{ json: { n: 1 } }],
			retryOnFail: { maxTries: 3 },
			executionId: 'flaky-execution',
		});

		expect(error).toBeUndefined();
		expect(attemptsByExecution.get('flaky-execution')).toBe(2);
		expect(output[0].map((item) => item.json)).toEqual([{ n: 1, attempt: 2 }]);
	});

	it('cancels the execution and its HTTP request when the abort signal fires', async () => {
		const controller = new AbortController();
		const running = runNode({
			node: new RequestNode(),
			parameters: { path: '/hang' },
			credentials: credentials(),
			abortSignal: controller.signal,
		});
		const request = await hangingRequest;
		controller.abort();
		const { output, error, run } = await running;

		expect(error).toMatchObject({ name: 'NodeApiError', message: 'canceled' });
		expect(run.status).toBe('canceled');
		expect(output).toEqual([]);
		expect(await request.closedEarly).toBe(true);
	});

	it.each(['default', 'filesystem'] as const)(
		'round-trips binary data in %s mode',
		async (mode) => {
			await setBinaryDataMode(mode);
			const item = await binaryItem('hello binary', 'greeting.txt', 'text/plain', { id: 7 });

			const { output, error } = await runNode({
				node: new BinaryNode(),
				parameters: {},
				items: [item],
			});

			expect(error).toBeUndefined();
			const [result] = output[0];
			expect(result.json).toMatchObject({
				text: 'hello binary',
				fileName: 'greeting.txt',
				hasId: mode === 'filesystem',
			});
			if (mode === 'filesystem') {
				expect(result.json.streamed).toBe('hello binary');
				expect(result.json.metadata).toEqual({
					fileName: 'greeting.txt',
					mimeType: 'text/plain',
					fileSize: 12,
				});
				expect(result.binary?.data.id).toMatch(/^filesystem/);
			} else {
				expect(result.binary?.data.data).toBe(Buffer.from('HELLO BINARY').toString('base64'));
			}
			expect(result.binary?.data.fileName).toBe('upper-greeting.txt');
			await setBinaryDataMode('default');
		},
	);

	it('keeps large binary data intact', async () => {
		await setBinaryDataMode('filesystem');
		const payload = Buffer.alloc(3 * 1024 * 1024, 'a');
		const item = await binaryItem(payload, 'big.txt', 'text/plain');
		const { output } = await runNode({ node: new BinaryNode(), parameters: {}, items: [item] });
		const digest = (text: string) => createHash('sha256').update(text).digest('hex');
		expect(digest(output[0][0].json.streamed as string)).toBe(digest(payload.toString()));
		await setBinaryDataMode('default');
	});

	it('persists poll static data between calls and emits only what the poll returns', async () => {
		const trigger = new CountingTrigger();
		const first = await runPoll(trigger, {}, credentials());
		expect(first.output).toBeNull();
		expect(first.error).toBeUndefined();

		const second = await runPoll(trigger, {}, credentials(), first.staticData);
		expect(second.output).toEqual([[{ json: { polls: 2 } }]]);
		expect(Object.values(second.staticData)).toEqual([{ polls: 2 }]);

		const manual = await runPoll(trigger, {}, credentials(), second.staticData, 'manual');
		expect(manual.output?.[0].map((item) => item.json)).toEqual([{ sample: true, polls: 3 }]);

		const failed = await runPoll(
			trigger,
			{},
			{ ...credentials(), baseUrl: 'fail' },
			manual.staticData,
		);
		expect(failed.output).toBeNull();
		expect(failed.error?.message).toBe('poll failed');
		expect(Object.values(failed.staticData)).toEqual([{ polls: 4 }]);
	});

	it('runs loadOptions methods with the current parameters and the credential', async () => {
		const options = await runLoadOptions(
			new OptionsNode(),
			'getThings',
			{ path: '/echo/things' },
			credentials(),
		);

		expect(options).toEqual([{ name: 'key-123', value: '/echo/things' }]);
		expect(seen[0].url).toMatch(/^\/echo\/things\?tenant=tenant-default/);
	});

	it('records what nodes and n8n log, metadata included', async () => {
		clearLoggedLines();
		await runNode({ node: new LoggingNode(), parameters: {} });

		expect(
			getLoggedLines().some(
				(line) => line.startsWith('info: node logged') && line.includes('visible-in-log'),
			),
		).toBe(true);
	});
});

describe('n8n harness with the emulator', () => {
	let emulator: Emulator;

	beforeAll(async () => {
		emulator = await startEmulator();
	});

	afterAll(async () => {
		await emulator.close();
	});

	it('runs Account > Get Environment Info of the package node', async () => {
		clearLoggedLines();
		const { output, error } = await runNode({
			node: new ProductDataIntegration(),
			parameters: { resource: 'account', operation: 'getEnvironmentInfo' },
			credentials: emulatorCredentials(emulator),
		});

		expect(error).toBeUndefined();
		expect(output[0]).toHaveLength(1);
		expect(output[0][0].json).toMatchObject({ customerId: 1001 });
		expect(output[0][0].json).not.toHaveProperty('authToken');
		expect(getLoggedLines().join('\n')).not.toContain('demo-password');
	});
});
