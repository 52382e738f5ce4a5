/**
 * In-process n8n for node tests and benchmarks: runs a node class with n8n-core's real engine, so
 * parameters, credentials, HTTP, binary data, continue-on-fail, retries and cancellation behave as
 * in n8n.
 *
 *   runNode(options): Promise<RunNodeResult>
 *     Runs the workflow "Start (Manual Trigger) -> node" with n8n-core's `WorkflowExecute`. The
 *     input items are the trigger's pinned data, as in a manual run with pinned trigger output.
 *     options: node (instance of the node class), parameters, items (default [{ json: {} }]),
 *     credentials (handed to every credential type the node declares), continueOnFail
 *     (node setting On Error: Continue), retryOnFail ({ maxTries, waitBetweenTriesMs } - n8n's
 *     own Retry On Fail, which re-runs the node with all its items within one execution),
 *     executionId (default: a fresh one per run; reuse it to simulate a re-run within one
 *     execution), abortSignal (aborting cancels the execution as the Stop button does),
 *     mode (default 'manual').
 *     Result: output (items of each output of the node; [] where it produced none), error
 *     (what the node threw, as n8n records it: a plain copy of the error's fields; also set
 *     when continueOnFail let the run go on with the input items), run (n8n's full IRun).
 *   runPoll(trigger, parameters, credentials, staticData?, mode?): Promise<RunPollResult>
 *     One poll. 'trigger' (default) goes through n8n-core's PollTriggerExecutor as an active
 *     workflow does; 'manual' runs the workflow with the trigger as start node as "Fetch Test
 *     Event" does. staticData is the workflow's static data before the poll (n8n keys a node's
 *     part 'node:<name>'); the result's staticData is a plain copy after the poll, to pass
 *     to the next call. Result: output (null = nothing to emit), staticData, error.
 *   createContext({ credentials, nodeParameters?, items?, continueOnFail?, signal? }): TestContext
 *     The `this` of the action node's execute() without a workflow run, to call the package's parts
 *     (the transport, an operation's steps) directly: n8n-core's ExecuteContext for the node with
 *     those parameters (n8n adds the defaults), input items (default [{ json: {} }]), On Error
 *     setting and execution cancel signal. `logged` holds every line it logged, as
 *     'level message {metadata as JSON}'. Every context is a run of the same node.
 *   createPollContext({ credentials, nodeParameters?, ... }): the same for the trigger's poll:
 *     n8n-core's PollContext of an active workflow (no cancel signal; what it emits goes nowhere).
 *   runLoadOptions(node, method, parameters, credentials?): Promise<INodePropertyOptions[]>
 *     Calls methods.loadOptions[method] in n8n-core's LoadOptionsContext, as the editor does.
 *   runListSearch(node, method, parameters, credentials?, filter?): Promise<INodeListSearchResult>
 *     The same for methods.listSearch[method] (the list of a resource locator).
 *   binaryItem(data, fileName, mimeType, json?): Promise<INodeExecutionData>
 *     An item with binary property 'data', stored through n8n's BinaryDataService.
 *   setBinaryDataMode(mode): Promise<void>
 *     'default' (initial): binary data inline in items (base64, no id), as an n8n set to keep
 *     binary data in memory stores it. 'filesystem': stored in files with an id, as n8n 2.x stores it by default - the
 *     mode in which getBinaryStream gives a real stream. Affects binary data stored afterwards.
 *   emulatorCredentials(emulator, overrides?): credential data for the emulator's default account.
 *   registerCredentialType(type): makes a credential type known to the credentials helper
 *     (the package's own credential is registered already).
 *   resolveCredentialData(data): the package's credential as a node reads it (defaults added,
 *     hidden fields dropped); resolveCredentialExpression(text, data) and
 *     authenticateRequest(data, options): what n8n's credential tester does before it sends the
 *     credential's test request.
 *   getLoggedLines(): string[] / clearLoggedLines(): every line n8n or a node logged, metadata
 *     rendered in depth, so tests can assert that no secret was logged.
 *   NODE_NAME: the name of the node under test in the workflow.
 *
 * One file per part: run.ts (runNode, runPoll), contexts.ts (createContext, createPollContext),
 * editor.ts (runLoadOptions, runListSearch), fixtures.ts (binaryItem, emulatorCredentials),
 * execute.ts (the workflow, its additional data and WorkflowExecute), nodeTypes.ts (the node under
 * test as n8n's loader hands it out, the Manual Trigger), credentials.ts (n8n's CredentialsHelper
 * for tests), credentialTester.ts (the credential test's request), services.ts (n8n's process-wide
 * services), logging.ts (the recorder).
 */

export { clearLoggedLines, getLoggedLines } from './logging';
export { registerCredentialType, resolveCredentialData } from './credentials';
export { authenticateRequest, resolveCredentialExpression } from './credentialTester';
export {
	createContext,
	createPollContext,
	type ContextOptions,
	type TestContext,
} from './contexts';
export { NODE_NAME, type NodeParameters } from './nodeTypes';
export { setBinaryDataMode } from './services';
export {
	runNode,
	runPoll,
	type RunNodeOptions,
	type RunNodeResult,
	type RunPollResult,
} from './run';
export { runListSearch, runLoadOptions } from './editor';
export { binaryItem, emulatorCredentials } from './fixtures';
