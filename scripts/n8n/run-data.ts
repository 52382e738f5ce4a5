/**
 * Reading what n8n reports about a workflow run: the output of `n8n execute --rawOutput` and the
 * execution data of the REST API. No n8n process involved, so these are unit-tested on their own.
 */
import type { ExecutionStatus, IDataObject, IRunExecutionData } from 'n8n-workflow';

import { tail } from './processes';

/** A run as `n8n execute --rawOutput` prints it (an IRun, dates as ISO strings). */
export interface WorkflowRun {
	data: IRunExecutionData;
	mode: string;
	status: ExecutionStatus;
	finished?: boolean;
	startedAt: string;
	stoppedAt?: string;
}

/**
 * The JSON of `n8n execute --rawOutput`. n8n prints log lines first (and, when the run failed, an
 * "Execution error" banner), then the run as JSON indented by two spaces: it starts at the first
 * line that is exactly `{` and ends at the next line that is exactly `}`, since every inner line is
 * indented. Anything after it (late log lines) is ignored.
 */
export function parseExecuteOutput(stdout: string): WorkflowRun {
	const lines = stdout.split(/\r?\n/);
	const start = lines.indexOf('{');
	const end = start === -1 ? -1 : lines.indexOf('}', start + 1);
	if (start === -1 || end === -1) {
		throw new Error(`No run data in the output of n8n execute:\n${tail(stdout)}`);
	}
	const run = JSON.parse(lines.slice(start, end + 1).join('\n')) as Partial<WorkflowRun>;
	if (typeof run !== 'object' || run === null || typeof run.data !== 'object' || !run.status) {
		throw new Error(`The output of n8n execute is not a workflow run:\n${tail(stdout)}`);
	}
	return run as WorkflowRun;
}

/**
 * The `json` of the items a node emitted: `output` is the node's output index (a node with two
 * outputs, e.g. "succeeded" and "failed", has 0 and 1), `runIndex` the how-many-th time the node
 * ran in this execution. Throws when the node did not run, so a test names the missing node.
 */
export function nodeItems(
	data: IRunExecutionData | { data: IRunExecutionData },
	nodeName: string,
	{ output = 0, runIndex = 0 }: { output?: number; runIndex?: number } = {},
): IDataObject[] {
	const runData = executionData(data).resultData.runData;
	const runs = runData[nodeName];
	if (!runs || runs.length <= runIndex) {
		const ran = Object.keys(runData).join(', ') || 'none';
		throw new Error(`Node "${nodeName}" has no run ${runIndex} (nodes that ran: ${ran})`);
	}
	const taskData = runs[runIndex];
	if (taskData.error) {
		throw new Error(`Node "${nodeName}" failed: ${taskData.error.message}`);
	}
	return (taskData.data?.main?.[output] ?? []).map((item) => item.json);
}

/** The error that stopped the run (its message and the node that failed), if it failed. */
export function runError(
	data: IRunExecutionData | { data: IRunExecutionData },
): { message: string; node?: string; description?: string } | undefined {
	const { error, lastNodeExecuted } = executionData(data).resultData;
	if (!error) return undefined;
	// Node errors carry their node; others (e.g. the Code node's) do not, but a run stops at the
	// node that failed.
	const { node } = error as { node?: { name?: string } };
	return {
		message: error.message,
		node: node?.name ?? lastNodeExecuted,
		description: error.description ?? undefined,
	};
}

function executionData(data: IRunExecutionData | { data: IRunExecutionData }): IRunExecutionData {
	return 'resultData' in data ? data : data.data;
}
