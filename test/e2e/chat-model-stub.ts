/**
 * A stand-in for an OpenAI-compatible chat model, for driving n8n's AI Agent in a real n8n without
 * a real model: it answers /v1/models (n8n's OpenAI credential test and model list) and
 * /v1/chat/completions with scripted turns, and keeps every completion request as it arrived (the
 * `tools` the agent offered, the messages with the tools' results).
 *
 *   const model = await startChatModelStub([
 *     (request) => callTool(request, 'Get_Result', { sessionId }),
 *     (request) => answer(`The upload ${toolResults(request)[0]}`),
 *   ]);
 *   // credential openAiApi: { apiKey: 'stub', url: model.url }   (model.url ends in /v1)
 *   model.requests[0].tools  // what n8n made of the tool nodes
 *   await model.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const STUB_MODEL = 'stub-model';

export interface ToolDefinition {
	type: 'function';
	function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export interface ChatMessage {
	role: string;
	content?: string | null | Array<{ type: string; text?: string }>;
	tool_calls?: Array<{
		id: string;
		type: 'function';
		function: { name: string; arguments: string };
	}>;
	tool_call_id?: string;
	name?: string;
}

export interface CompletionRequest {
	model: string;
	messages: ChatMessage[];
	tools?: ToolDefinition[];
	stream?: boolean;
	[key: string]: unknown;
}

/** The assistant message of one completion: text, or calls of tools. */
export type AssistantReply = Pick<ChatMessage, 'content' | 'tool_calls'>;

/** Turn n of the script answers the n-th completion request. */
export type Turn = (request: CompletionRequest) => AssistantReply;

export interface ChatModelStub {
	/** Base URL for n8n's OpenAI credential, ending in /v1. */
	url: string;
	requests: CompletionRequest[];
	close(): Promise<void>;
}

/** The name the agent gave the tool of an n8n node (n8n makes it from the node's name). */
export function toolNamed(request: CompletionRequest, nodeName: string): ToolDefinition {
	const name = nodeName.replace(/[^a-zA-Z0-9_-]+/g, '_');
	const tool = request.tools?.find((entry) => entry.function.name === name);
	if (!tool) {
		const offered = (request.tools ?? []).map((entry) => entry.function.name).join(', ') || 'none';
		throw new Error(`The agent offered no tool ${name} (offered: ${offered})`);
	}
	return tool;
}

/** A reply that calls the tool of the node `nodeName` with `args`. */
export function callTool(
	request: CompletionRequest,
	nodeName: string,
	args: Record<string, unknown>,
): AssistantReply {
	const { name } = toolNamed(request, nodeName).function;
	const id = `call_${request.messages.length}`;
	return {
		content: null,
		tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
	};
}

/** A final text reply. */
export function answer(text: string): AssistantReply {
	return { content: text };
}

/** The text of the tool results the agent sent back, in order. */
export function toolResults(request: CompletionRequest): string[] {
	return request.messages
		.filter((message) => message.role === 'tool')
		.map((message) =>
			typeof message.content === 'string'
				? message.content
				: (message.content ?? []).map((part) => part.text ?? '').join(''),
		);
}

function send(response: ServerResponse, status: number, body: unknown): void {
	const text = JSON.stringify(body);
	response.writeHead(status, {
		'Content-Type': 'application/json',
		'Content-Length': Buffer.byteLength(text),
	});
	response.end(text);
}

async function readJson(request: IncomingMessage): Promise<unknown> {
	const chunks: Buffer[] = [];
	for await (const chunk of request) chunks.push(chunk as Buffer);
	return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function completion(index: number, reply: AssistantReply) {
	return {
		id: `chatcmpl-stub-${index}`,
		object: 'chat.completion',
		created: Math.floor(Date.now() / 1000),
		model: STUB_MODEL,
		choices: [
			{
				index: 0,
				message: { role: 'assistant', ...reply },
				finish_reason: reply.tool_calls ? 'tool_calls' : 'stop',
			},
		],
		usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
	};
}

export async function startChatModelStub(turns: Turn[]): Promise<ChatModelStub> {
	const requests: CompletionRequest[] = [];
	const server = createServer((request, response) => {
		const path = (request.url ?? '').split('?')[0];
		if (request.method === 'GET' && path === '/v1/models') {
			send(response, 200, {
				object: 'list',
				data: [{ id: STUB_MODEL, object: 'model', created: 0, owned_by: 'stub' }],
			});
			return;
		}
		if (request.method !== 'POST' || path !== '/v1/chat/completions') {
			send(response, 404, { error: { message: `No route ${request.method} ${path}` } });
			return;
		}
		readJson(request).then(
			(body) => {
				const completionRequest = body as CompletionRequest;
				requests.push(completionRequest);
				const turn = turns[requests.length - 1];
				if (completionRequest.stream) {
					send(response, 400, { error: { message: 'The stub answers only without streaming' } });
				} else if (!turn) {
					send(response, 500, { error: { message: `The script has no turn ${requests.length}` } });
				} else {
					try {
						send(response, 200, completion(requests.length, turn(completionRequest)));
					} catch (error) {
						send(response, 500, { error: { message: (error as Error).message } });
					}
				}
			},
			(error: Error) => send(response, 400, { error: { message: error.message } }),
		);
	});
	await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}/v1`,
		requests,
		close: async () => await new Promise<void>((resolve) => server.close(() => resolve())),
	};
}
