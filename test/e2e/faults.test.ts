/**
 * A hostile network, in a real n8n: a poll whose request never gets an answer, an upload whose
 * answer is lost under Retry On Fail, an upload asked to come back later, a Base URL that
 * redirects the credential test elsewhere.
 */
import type { IncomingHttpHeaders } from 'node:http';

import type { IDataObject } from 'n8n-workflow';

import { startEmulator, type Emulator } from '../../scripts/emulator';
import { putXml } from '../../scripts/emulator/client';
import { listenLocal } from '../helpers/server';
import { postControl } from '../helpers/service';
import {
	actionNode,
	chainWorkflow,
	CREDENTIAL_TYPE,
	EMULATOR_CREDENTIAL,
	nodeItems,
	nodeType,
	prepareN8n,
	until,
	type N8nHarness,
	type WorkflowDefinition,
} from './harness';

const TRIGGER = 'On Upload';
const CHAIR = '<Products><Product><Sku>CH-1</Sku></Product></Products>';
const TABLE = '<Products><Product><Sku>TB-1</Sku></Product></Products>';

async function fault(emulator: Emulator, rule: IDataObject): Promise<void> {
	await postControl(emulator.url, 'faults', rule);
}

/** The trigger alone, polling every minute, reporting each upload when it is listed. */
const triggerWorkflow: WorkflowDefinition = {
	name: 'Trigger under faults',
	nodes: [
		{
			id: '6f1c0f9e-1d3a-4b7e-8a55-000000000001',
			name: TRIGGER,
			type: nodeType('productDataIntegrationTrigger'),
			typeVersion: 1,
			position: [0, 0],
			parameters: {
				pollTimes: { item: [{ mode: 'everyMinute' }] },
				events: ['uploadReceived'],
				options: {},
			},
			credentials: { [CREDENTIAL_TYPE]: { ...EMULATOR_CREDENTIAL } },
		},
	],
	connections: {},
	settings: { executionOrder: 'v1' },
};

describe('a hostile network in a running n8n', () => {
	let n8n: N8nHarness;

	function listings(): number {
		return n8n.emulator.stats().requests['GET /api/xml/{date}'] ?? 0;
	}

	beforeAll(async () => {
		// A long Request Timeout: only the poll's own deadline can end a request that hangs.
		n8n = await prepareN8n({
			emulator: { processingMs: 100 },
			credential: { requestTimeoutSeconds: 600 },
		});
	});

	afterAll(async () => {
		await n8n?.stop();
	});

	test('Retry On Fail after a lost answer: the upload that arrived is adopted, nothing is uploaded twice', async () => {
		// The first upload is stored, then its connection is reset: the node cannot know it arrived.
		await fault(n8n.emulator, { count: 1, kind: 'reset', path: '/api/xml' });
		const before = n8n.emulator.uploads().length;
		const result = await n8n.run(
			chainWorkflow(
				'Lost answer',
				[{ json: { xml: CHAIR } }, { json: { xml: TABLE } }],
				[
					actionNode(
						'Upload',
						{ resource: 'document', operation: 'upload', source: 'text', xml: '={{ $json.xml }}' },
						{ retryOnFail: true, maxTries: 2, waitBetweenTries: 0 },
					),
				],
			),
		);

		const uploads = n8n.emulator.uploads().slice(before);
		expect(uploads).toHaveLength(2);
		expect(nodeItems(result, 'Upload')).toEqual([
			expect.objectContaining({ sessionId: uploads[0].id, reused: true }),
			expect.objectContaining({ sessionId: uploads[1].id }),
		]);
	});

	test('a 503 that asks to come back (Retry-After), in the words of an unavailable service: every item is uploaded once', async () => {
		await fault(n8n.emulator, { count: 2, kind: '503', retryAfter: '1', path: '/api/xml' });
		const before = n8n.emulator.uploads().length;
		const result = await n8n.run(
			chainWorkflow(
				'Come back later',
				[{ json: { xml: CHAIR } }, { json: { xml: TABLE } }],
				[
					actionNode('Upload', {
						resource: 'document',
						operation: 'upload',
						source: 'text',
						xml: '={{ $json.xml }}',
					}),
				],
			),
		);

		const uploads = n8n.emulator.uploads().slice(before);
		expect(uploads).toHaveLength(2);
		expect(nodeItems(result, 'Upload')).toEqual([
			expect.objectContaining({ sessionId: uploads[0].id }),
			expect.objectContaining({ sessionId: uploads[1].id }),
		]);
	});

	test('Get Result fetches an error document the service keeps on another host, without the credential', async () => {
		const FAILED = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';
		const seen: IncomingHttpHeaders[] = [];
		const documents = await listenLocal((req, res) => {
			seen.push(req.headers);
			req.resume();
			res
				.writeHead(200, { 'Content-Type': 'application/json' })
				.end(JSON.stringify({ message: 'Line 3: the element Sku is empty' }));
		});
		const service = await listenLocal((req, res) => {
			req.resume();
			res.writeHead(301, { Location: `${documents.url}/blobs/${FAILED}.json` }).end();
		});
		try {
			const credential = await n8n.createCredential('Error documents on another host', {
				baseUrl: service.url,
			});
			const result = await n8n.run(
				chainWorkflow(
					'Error document elsewhere',
					[{ json: {} }],
					[
						actionNode(
							'Get Result',
							{
								resource: 'uploadSession',
								operation: 'getResult',
								sessionId: FAILED,
								options: {
									includeErrorMessage: true,
									allowedInternalHosts: new URL(documents.url).host,
								},
							},
							{ credential },
						),
					],
				),
			);

			expect(nodeItems(result, 'Get Result')).toEqual([
				expect.objectContaining({
					sessionId: FAILED,
					status: 'failed',
					errorMessage: 'Line 3: the element Sku is empty',
				}),
			]);
			expect(seen).toHaveLength(1);
			expect(seen[0].authorization).toBeUndefined();
			expect(seen[0].customerid).toBeUndefined();
			expect(seen[0].customeridtype).toBeUndefined();
		} finally {
			await service.close();
			await documents.close();
		}
	});

	test('an error document on this machine is refused by default, fetched when Allowed Internal Hosts names its host, and refused beside it', async () => {
		const FAILED = '3f2504e0-4f89-41d3-9a0c-0305e82c3302';
		let requests = 0;
		const documents = await listenLocal((req, res) => {
			requests++;
			req.resume();
			res
				.writeHead(200, { 'Content-Type': 'application/json' })
				.end(JSON.stringify({ message: 'Line 3: the element Sku is empty' }));
		});
		let neighbourRequests = 0;
		const neighbour = await listenLocal((req, res) => {
			neighbourRequests++;
			req.resume();
			res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"message":"neighbour"}');
		});
		const named = new URL(documents.url).host;
		let location = `${documents.url}/blobs/${FAILED}.json`;
		const service = await listenLocal((req, res) => {
			req.resume();
			res.writeHead(301, { Location: location }).end();
		});
		try {
			const credential = await n8n.createCredential('Error documents on this machine', {
				baseUrl: service.url,
			});
			const getResult = async (allowedInternalHosts: string) =>
				nodeItems(
					await n8n.run(
						chainWorkflow(
							'Error document on this machine',
							[{ json: {} }],
							[
								actionNode(
									'Get Result',
									{
										resource: 'uploadSession',
										operation: 'getResult',
										sessionId: FAILED,
										options: { includeErrorMessage: true, allowedInternalHosts },
									},
									{ credential },
								),
							],
						),
					),
					'Get Result',
				)[0];

			expect(await getResult('')).toEqual(
				expect.objectContaining({
					status: 'failed',
					warning: `The error message could not be fetched: The service handed out an error document on ${named}, which is not fetched: it is not an https URL`,
				}),
			);
			expect(requests).toBe(0);

			expect(await getResult(named)).toEqual(
				expect.objectContaining({ errorMessage: 'Line 3: the element Sku is empty' }),
			);
			expect(requests).toBe(1);

			const beside = named.replace('127.0.0.1', 'localhost');
			location = `http://${beside}/blobs/${FAILED}.json`;
			expect(await getResult(named)).toEqual(
				expect.objectContaining({
					warning: `The error message could not be fetched: The service handed out an error document on ${beside}, which is not fetched: it is not an https URL`,
				}),
			);
			location = `https://${beside}/blobs/${FAILED}.json`;
			expect(await getResult(named)).toEqual(
				expect.objectContaining({
					// A name is refused in the same words whether it has no address or an internal one.
					warning: `The error message could not be fetched: The service handed out an error document on ${beside}, which is not fetched: localhost is either unreachable or not on the public internet (a host inside your network is reached only where Allowed Internal Hosts names it)`,
				}),
			);
			// The same address on another port, and another loopback address on the same port.
			for (const other of [
				new URL(neighbour.url).host,
				`127.0.0.2:${new URL(documents.url).port}`,
			]) {
				location = `https://${other}/blobs/${FAILED}.json`;
				expect(await getResult(named)).toEqual(
					expect.objectContaining({
						warning: `The error message could not be fetched: The service handed out an error document on ${other}, which is not fetched: it leads to a loopback address`,
					}),
				);
			}
			expect(requests).toBe(1);
			expect(neighbourRequests).toBe(0);
		} finally {
			await service.close();
			await neighbour.close();
			await documents.close();
		}
	});

	test('the credential test does not follow a Base URL that redirects, nor send the credentials there', async () => {
		const { credential } = n8n;
		const elsewhere = await startEmulator();
		try {
			await fault(n8n.emulator, {
				count: 1,
				kind: 'redirect',
				location: `${elsewhere.url}/api/auth/me`,
				path: '/api/auth/me',
			});
			const { data } = await n8n.server.request<{ data: { status: string; message: string } }>(
				'POST',
				'/rest/credentials/test',
				{
					credentials: credential,
				},
			);
			expect(data).toEqual({
				status: 'Error',
				message: expect.stringContaining('redirects elsewhere'),
			});
			expect(elsewhere.stats().requests).toEqual({});
		} finally {
			await elsewhere.close();
		}
	});

	test('a poll whose request never gets an answer ends at its deadline, says so, and the trigger recovers', async () => {
		const workflowId = await n8n.importWorkflow(triggerWorkflow);
		const before = listings();
		await n8n.server.activateWorkflow(workflowId);
		// The poll at activation lists the day; the next list request then hangs for good.
		await until('the poll at activation', () => listings() > before, 90_000);
		await fault(n8n.emulator, { count: 1, kind: 'hang', path: '/api/xml/' });
		const hungAt = listings() + 1;
		await until('the poll that hangs', () => listings() >= hungAt, 90_000);

		// The poll after it: a deadline below the minute let it run; it lists and reports this upload.
		const response = await putXml(n8n.emulator, CHAIR);
		expect(response.status).toBe(202);
		let reported: IDataObject[] = [];
		let stopped: string[] = [];
		await until(
			'the upload to be reported',
			async () => {
				const summaries = await n8n.server.listExecutions({ workflowId });
				const runs = await Promise.all(
					summaries.map(async (run) => await n8n.server.getExecution(run.id)),
				);
				// The poll stopped at its deadline is recorded as a failed trigger execution.
				stopped = runs.flatMap((run) =>
					run.status === 'error' ? [String(run.data.resultData.error?.message)] : [],
				);
				reported = runs
					.filter((run) => run.status === 'success')
					.flatMap((run) => nodeItems(run, TRIGGER));
				return reported.some((item) => item.id === response.text);
			},
			200_000,
		);
		expect(reported.filter((item) => item.id === response.text)).toEqual([
			expect.objectContaining({ event: 'uploadReceived' }),
		]);
		expect(stopped).toEqual([
			expect.stringMatching(/^The poll was stopped after 55 s, its time budget/),
		]);
		expect(n8n.server.log()).toMatch(/The poll was stopped after 55 s, its time budget/);
	});
});
