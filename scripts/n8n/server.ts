/**
 * A running `n8n start` and its REST API, logged in as the owner: workflows created, run (as the
 * editor's "Execute workflow" does) and activated, executions read back with their run data.
 * Started by N8nFolder.start() (./instance.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

import type { ExecutionStatus, IRunExecutionData } from 'n8n-workflow';
import { request as httpRequest } from 'undici';

import { editorTriggerName, type NodeTypeFacts, type TriggerCandidate } from './editor-trigger';
import { runError } from './run-data';
import { killGroup, sleep, tail, untrack } from './processes';

const START_TIMEOUT_MS = 3 * 60_000;
const STOP_TIMEOUT_MS = 30_000;
const RUN_TIMEOUT_MS = 5 * 60_000;

export interface Owner {
	email: string;
	password: string;
	firstName: string;
	lastName: string;
}

export interface WorkflowDefinition {
	id?: string;
	name: string;
	nodes: unknown[];
	connections: Record<string, unknown>;
	[key: string]: unknown;
}

export interface ExecutionSummary {
	id: string;
	workflowId: string;
	mode: string;
	status: ExecutionStatus;
	createdAt: string;
	startedAt: string | null;
	stoppedAt: string | null;
}

/** One execution with its run data, as GET /rest/executions/:id gives it (data decoded). */
export interface StoredExecution extends ExecutionSummary {
	finished: boolean;
	data: IRunExecutionData;
	/**
	 * The bytes of the run data as n8n stores it (the `data` column of execution_data, the string the
	 * API gives before it is decoded): what the execution leaves in n8n's database until it prunes it.
	 */
	dataBytes: number;
}

/** A data table of the owner's personal project. */
export interface DataTable {
	projectId: string;
	id: string;
}

export type DataTableColumnType = 'string' | 'number' | 'boolean' | 'date';

export interface CredentialInput {
	name: string;
	type: string;
	data: object;
}

const FINISHED_STATUSES: ReadonlySet<string> = new Set(['success', 'error', 'crashed', 'canceled']);

type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export class N8nServer {
	private cookie = '';

	private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

	private readonly exited: Promise<void>;

	/**
	 * `child`: the `n8n start` process this driver started (N8nFolder.start()); without it, the
	 * client of an n8n started elsewhere, which stop() leaves running.
	 */
	constructor(
		readonly url: string,
		readonly logFile: string,
		private readonly parseFlatted: (text: string) => unknown,
		private readonly child?: ChildProcess,
	) {
		this.exited = new Promise((resolvePromise) => {
			child?.once('exit', (code, signal) => {
				this.exit = { code, signal };
				untrack(child);
				resolvePromise();
			});
		});
	}

	/** The pid of the n8n process this driver started; undefined for one started elsewhere. */
	get pid(): number | undefined {
		return this.child?.pid;
	}

	/** A promise that settles when the n8n this driver started has exited, for whatever reason. */
	get stopped(): Promise<void> {
		return this.exited;
	}

	/** Waits for GET /healthz/readiness = 200 (/healthz answers before the REST API is up). */
	async waitUntilReady(timeoutMs = START_TIMEOUT_MS): Promise<void> {
		const deadline = Date.now() + timeoutMs;
		while (Date.now() < deadline) {
			this.assertRunning();
			try {
				const { statusCode, body } = await httpRequest(`${this.url}/healthz/readiness`);
				await body.dump();
				if (statusCode === 200) return;
			} catch {
				// Not listening yet.
			}
			await sleep(250);
		}
		throw new Error(`n8n was not ready within ${timeoutMs} ms:\n${this.logTail()}`);
	}

	/**
	 * Sets up the owner on a new n8n, or logs in as the owner an earlier start set up; every later
	 * request is made as the owner. 'created' or 'kept'.
	 */
	async ensureOwner(owner: Owner): Promise<'created' | 'kept'> {
		const setup = await this.send('POST', '/rest/owner/setup', owner);
		if (setup.statusCode === 200) {
			this.cookie = authCookie(setup.headers['set-cookie']);
			return 'created';
		}
		if (!setup.text.includes('already setup'))
			throw new Error(`Owner set-up failed: ${setup.statusCode} ${setup.text}`);
		const login = await this.send('POST', '/rest/login', {
			emailOrLdapLoginId: owner.email,
			password: owner.password,
		});
		if (login.statusCode !== 200)
			throw new Error(`Owner login failed: ${login.statusCode} ${login.text}`);
		this.cookie = authCookie(login.headers['set-cookie']);
		return 'kept';
	}

	/** Any route, as the owner; the parsed JSON answer. Throws on a status >= 300. */
	async request<T = unknown>(method: Method, path: string, body?: unknown): Promise<T> {
		const { statusCode, text } = await this.send(method, path, body);
		if (statusCode >= 300)
			throw new Error(`${method} ${path}: ${statusCode} ${text.slice(0, 500)}`);
		return JSON.parse(text) as T;
	}

	/** Creates a workflow (keeping its id, if it has one); its id and the version to activate. */
	async createWorkflow(workflow: WorkflowDefinition): Promise<{ id: string; versionId: string }> {
		const { data } = await this.request<{ data: { id: string; versionId: string } }>(
			'POST',
			'/rest/workflows',
			workflow,
		);
		return { id: data.id, versionId: data.versionId };
	}

	/**
	 * Runs a workflow as the editor's "Execute workflow" does, from its Manual Trigger or the
	 * trigger named, and waits for the execution to finish: its status must be 'success' (or
	 * 'error' with expect 'failure').
	 */
	async runWorkflow(
		id: string,
		{ expect = 'success', trigger }: { expect?: 'success' | 'failure'; trigger?: string } = {},
	): Promise<StoredExecution> {
		const execution = await this.waitForExecution(await this.startRun(id, trigger));
		const wanted = expect === 'success' ? 'success' : 'error';
		if (execution.status !== wanted) {
			const error = runError(execution.data);
			const why = error ? ` (${error.node ? `${error.node}: ` : ''}${error.message})` : '';
			throw new Error(
				`Execution ${execution.id} of workflow ${id} ended with status ${execution.status}, expected ${wanted}${why}`,
			);
		}
		return execution;
	}

	/**
	 * The trigger the editor's "Execute workflow" button starts the workflow from when it opens
	 * (./editor-trigger.ts); undefined when it has none that can run.
	 */
	async editorTrigger(id: string): Promise<string | undefined> {
		const { data: workflow } = await this.request<{ data: { nodes: TriggerCandidate[] } }>(
			'GET',
			`/rest/workflows/${encodeURIComponent(id)}`,
		);
		const key = (type: string, version: number) => `${type}@${version}`;
		const kinds = [
			...new Map(
				workflow.nodes.map((node) => [
					key(node.type, node.typeVersion),
					{ name: node.type, version: node.typeVersion },
				]),
			).values(),
		];
		const { data: descriptions } = await this.request<{
			data: Array<(NodeTypeFacts & { name: string; version: number | number[] }) | null>;
		}>('POST', '/rest/node-types', { nodeInfos: kinds });
		const facts = new Map(
			kinds.map((kind, index) => [key(kind.name, kind.version), descriptions[index] ?? undefined]),
		);
		return editorTriggerName(workflow.nodes, (node) => facts.get(key(node.type, node.typeVersion)));
	}

	/** The workflow's static data as n8n saved it (where triggers keep their state), {} when none. */
	async getWorkflowStaticData(id: string): Promise<Record<string, unknown>> {
		const { data } = await this.request<{ data: { staticData?: Record<string, unknown> | null } }>(
			'GET',
			`/rest/workflows/${encodeURIComponent(id)}`,
		);
		return data.staticData ?? {};
	}

	/**
	 * Starts a run from the trigger named, or else the workflow's Manual Trigger; the execution's
	 * id, without waiting.
	 */
	async startRun(id: string, triggerName?: string): Promise<string> {
		let name = triggerName;
		if (name === undefined) {
			const { data: workflow } = await this.request<{
				data: { nodes: Array<{ name: string; type: string }> };
			}>('GET', `/rest/workflows/${encodeURIComponent(id)}`);
			name = workflow.nodes.find((node) => node.type === 'n8n-nodes-base.manualTrigger')?.name;
			if (name === undefined)
				throw new Error(`Workflow ${id} has no Manual Trigger to run it from`);
		}
		const { data } = await this.request<{ data: { executionId?: string } }>(
			'POST',
			`/rest/workflows/${encodeURIComponent(id)}/run`,
			{ triggerToStartFrom: { name } },
		);
		if (!data.executionId)
			throw new Error(`n8n started no execution of workflow ${id}: ${JSON.stringify(data)}`);
		return data.executionId;
	}

	/** Waits for an execution to finish (any status but new, running or waiting); it with its data. */
	async waitForExecution(
		executionId: string,
		timeoutMs = RUN_TIMEOUT_MS,
	): Promise<StoredExecution> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const execution = await this.getExecution(executionId);
			if (FINISHED_STATUSES.has(execution.status)) return execution;
			if (Date.now() > deadline)
				throw new Error(
					`Execution ${executionId} did not finish within ${timeoutMs} ms (${execution.status})`,
				);
			await sleep(100);
		}
	}

	/** Publishes the workflow's current version: its triggers start (a polling trigger polls at once). */
	async activateWorkflow(id: string): Promise<void> {
		const { data } = await this.request<{ data: { versionId: string } }>(
			'GET',
			`/rest/workflows/${encodeURIComponent(id)}`,
		);
		await this.request('POST', `/rest/workflows/${encodeURIComponent(id)}/activate`, {
			versionId: data.versionId,
		});
	}

	async deactivateWorkflow(id: string): Promise<void> {
		await this.request('POST', `/rest/workflows/${encodeURIComponent(id)}/deactivate`, {});
	}

	/** Stops every active workflow's triggers. */
	async deactivateAllWorkflows(): Promise<void> {
		const { data } = await this.request<{ data: string[] }>('GET', '/rest/active-workflows');
		for (const id of data) await this.deactivateWorkflow(id);
	}

	/** Creates a credential owned by the owner; its id (n8n chooses it). */
	async createCredential(credential: CredentialInput): Promise<string> {
		const { data } = await this.request<{ data: { id: string } }>(
			'POST',
			'/rest/credentials',
			credential,
		);
		return data.id;
	}

	/** Replaces the name and data of an existing credential. */
	async updateCredential(id: string, credential: CredentialInput): Promise<void> {
		await this.request('PATCH', `/rest/credentials/${encodeURIComponent(id)}`, credential);
	}

	/** Creates a data table in the owner's personal project, as the editor's Data tables page does. */
	async createDataTable(
		name: string,
		columns: Array<{ name: string; type: DataTableColumnType }>,
	): Promise<DataTable> {
		const { data: project } = await this.request<{ data: { id: string } }>(
			'GET',
			'/rest/projects/personal',
		);
		const { data: table } = await this.request<{ data: { id: string } }>(
			'POST',
			`/rest/projects/${project.id}/data-tables`,
			{ name, columns },
		);
		return { projectId: project.id, id: table.id };
	}

	/** The data tables of the owner's personal project (up to 250), with their columns. */
	async dataTables(): Promise<
		Array<DataTable & { name: string; columns: Array<{ name: string; type: DataTableColumnType }> }>
	> {
		const { data: project } = await this.request<{ data: { id: string } }>(
			'GET',
			'/rest/projects/personal',
		);
		const { data } = await this.request<{
			data: {
				data: Array<{
					id: string;
					name: string;
					columns: Array<{ name: string; type: DataTableColumnType; index: number }>;
				}>;
			};
		}>('GET', `/rest/projects/${project.id}/data-tables?take=250`);
		return data.data.map(({ id, name, columns }) => ({
			projectId: project.id,
			id,
			name,
			columns: [...columns]
				.sort((a, b) => a.index - b.index)
				.map((column) => ({ name: column.name, type: column.type })),
		}));
	}

	/**
	 * The data table of that name in the owner's personal project, created with `columns` if there
	 * is none; one there already keeps its rows and gets the columns it lacks.
	 */
	async ensureDataTable(
		name: string,
		columns: Array<{ name: string; type: DataTableColumnType }>,
	): Promise<DataTable> {
		const existing = (await this.dataTables()).find((table) => table.name === name);
		if (!existing) return await this.createDataTable(name, columns);
		const present = new Set(existing.columns.map((column) => column.name));
		for (const column of columns.filter((wanted) => !present.has(wanted.name))) {
			await this.request(
				'POST',
				`/rest/projects/${existing.projectId}/data-tables/${existing.id}/columns`,
				column,
			);
		}
		return { projectId: existing.projectId, id: existing.id };
	}

	/** A data table's rows (up to 1,000), oldest first, with n8n's id, createdAt and updatedAt. */
	async dataTableRows(table: DataTable): Promise<Array<Record<string, unknown>>> {
		const { data } = await this.request<{ data: { data: Array<Record<string, unknown>> } }>(
			'GET',
			`/rest/projects/${table.projectId}/data-tables/${table.id}/rows?take=1000`,
		);
		return data.data;
	}

	/** How many rows a data table holds. */
	async dataTableRowCount(table: DataTable): Promise<number> {
		const { data } = await this.request<{ data: { count: number } }>(
			'GET',
			`/rest/projects/${table.projectId}/data-tables/${table.id}/rows?take=1`,
		);
		return data.count;
	}

	/** The latest 100 executions, newest first (GET /rest/executions; 100 is its largest page). */
	async listExecutions(
		filter: { workflowId?: string; status?: ExecutionStatus } = {},
	): Promise<ExecutionSummary[]> {
		const query = new URLSearchParams({ filter: JSON.stringify(filter), limit: '100' });
		const answer = await this.request<{ data: { results: ExecutionSummary[] } }>(
			'GET',
			`/rest/executions?${query}`,
		);
		return answer.data.results;
	}

	/** One execution with its run data (GET /rest/executions/:id). */
	async getExecution(id: string): Promise<StoredExecution> {
		const answer = await this.request<{ data?: Omit<StoredExecution, 'data'> & { data: string } }>(
			'GET',
			`/rest/executions/${encodeURIComponent(id)}`,
		);
		if (!answer.data) throw new Error(`Execution ${id} not found`);
		return {
			...answer.data,
			data: this.parseFlatted(answer.data.data) as IRunExecutionData,
			dataBytes: Buffer.byteLength(answer.data.data),
		};
	}

	/**
	 * Waits until the workflow has `count` finished executions (with `status`, if given) and returns
	 * them oldest first.
	 */
	async waitForExecutions({
		workflowId,
		count = 1,
		status,
		timeoutMs = 120_000,
	}: {
		workflowId: string;
		count?: number;
		status?: ExecutionStatus;
		timeoutMs?: number;
	}): Promise<ExecutionSummary[]> {
		const deadline = Date.now() + timeoutMs;
		let seen: ExecutionSummary[] = [];
		while (Date.now() < deadline) {
			seen = await this.listExecutions({ workflowId });
			const finished = seen.filter((execution) =>
				status ? execution.status === status : FINISHED_STATUSES.has(execution.status),
			);
			if (finished.length >= count) return finished.sort((a, b) => Number(a.id) - Number(b.id));
			await sleep(250);
		}
		const statuses =
			seen.map((execution) => `${execution.id}:${execution.status}`).join(', ') || 'none';
		throw new Error(
			`Workflow ${workflowId} did not reach ${count} finished execution(s)${status ? ` with status ${status}` : ''} within ${timeoutMs} ms (seen: ${statuses})`,
		);
	}

	/** Everything n8n has printed so far (stdout and stderr). */
	log(): string {
		return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8') : '';
	}

	/**
	 * SIGSTOP to the process group, as a host that stalls (a long garbage collection, a frozen VM):
	 * n8n keeps its connections and leases but does nothing until resume(). Only an n8n this driver
	 * started.
	 */
	pause(): void {
		if (this.child && !this.exit) killGroup(this.child, 'SIGSTOP');
	}

	resume(): void {
		if (this.child && !this.exit) killGroup(this.child, 'SIGCONT');
	}

	/**
	 * SIGTERM, as an operator stops n8n; SIGKILL for the whole group if it does not stop in time.
	 * Only an n8n this driver started.
	 */
	async stop(): Promise<void> {
		const { child } = this;
		if (!child) return;
		if (!this.exit) {
			// A paused n8n would only act on SIGTERM once continued.
			killGroup(child, 'SIGCONT');
			child.kill('SIGTERM');
			const timer = setTimeout(() => killGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS);
			await this.exited;
			clearTimeout(timer);
		}
		// The task runner n8n started, should it have outlived n8n.
		killGroup(child, 'SIGKILL');
	}

	private async send(method: Method, path: string, body?: unknown) {
		this.assertRunning();
		const response = await httpRequest(`${this.url}${path}`, {
			method,
			// A connection per request: n8n closes idle keep-alive connections, and a request sent on
			// one just as it does so fails with "other side closed".
			reset: true,
			headers: {
				cookie: this.cookie,
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		return {
			statusCode: response.statusCode,
			headers: response.headers,
			text: await response.body.text(),
		};
	}

	private assertRunning(): void {
		if (this.exit) {
			const how = this.exit.signal ? `signal ${this.exit.signal}` : `exit code ${this.exit.code}`;
			throw new Error(`n8n stopped (${how}):\n${this.logTail()}`);
		}
	}

	private logTail(): string {
		return tail(this.log()) || '(no output)';
	}
}

function authCookie(setCookie: string | string[] | undefined): string {
	const cookies = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
	const auth = cookies
		.map((cookie) => cookie.split(';')[0])
		.find((cookie) => cookie.startsWith('n8n-auth='));
	if (!auth) throw new Error('n8n answered without the n8n-auth cookie');
	return auth;
}
