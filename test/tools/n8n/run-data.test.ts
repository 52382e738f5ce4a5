import type { IRunExecutionData } from 'n8n-workflow';

import {
	nodeItems,
	parseExecuteOutput,
	runError,
	type WorkflowRun,
} from '../../../scripts/n8n/run-data';

function runOf(data: unknown, status = 'success'): WorkflowRun {
	return {
		data: data as IRunExecutionData,
		mode: 'cli',
		status: status as WorkflowRun['status'],
		startedAt: '2026-01-01T00:00:00.000Z',
	};
}

const TWO_OUTPUTS = runOf({
	resultData: {
		runData: {
			Start: [{ data: { main: [[{ json: {} }]] } }],
			Split: [
				{
					data: {
						main: [
							[{ json: { side: 'left' } }],
							[{ json: { side: 'right', n: 1 } }, { json: { side: 'right', n: 2 } }],
						],
					},
				},
				{ data: { main: [[{ json: { again: true } }]] } },
			],
			Broken: [{ error: { message: 'went wrong' } }],
		},
	},
});

describe('parseExecuteOutput', () => {
	test('skips the log lines before the run, even ones that hold braces', () => {
		const run = runOf({ resultData: { runData: {} } });
		const stdout = [
			'n8n Task Broker ready on 127.0.0.1, port 40000',
			'{ "not": "the run" }',
			'  {',
			JSON.stringify(run, null, 2),
			'',
		].join('\n');

		expect(parseExecuteOutput(stdout)).toEqual(run);
	});

	test('reads the run after the error banner of a failed execution and ignores later lines', () => {
		const run = runOf(
			{ resultData: { runData: {}, error: { message: 'boom', node: { name: 'Code' } } } },
			'error',
		);
		const stdout = [
			'Execution was NOT successful. See log message for details.',
			'Execution error:',
			'====================================',
			JSON.stringify(run, null, 2),
			'}',
			'a late log line',
		].join('\n');

		expect(parseExecuteOutput(stdout)).toEqual(run);
	});

	test('keeps values that are a lone brace on their own line inside strings', () => {
		const run = runOf({
			resultData: { runData: { Code: [{ data: { main: [[{ json: { text: '{\n}' } }]] } }] } },
		});

		expect(nodeItems(parseExecuteOutput(JSON.stringify(run, null, 2)), 'Code')).toEqual([
			{ text: '{\n}' },
		]);
	});

	test('says so when there is no run in the output', () => {
		expect(() => parseExecuteOutput('The workflow with the id "x" does not exist.\n')).toThrow(
			/No run data in the output of n8n execute:\nThe workflow with the id "x" does not exist\./,
		);
	});

	test('refuses JSON that is not a run', () => {
		expect(() => parseExecuteOutput('{\n  "data": 1\n}\n')).toThrow(/not a workflow run/);
	});
});

describe('nodeItems', () => {
	test('returns the json of the first output of the first run by default', () => {
		expect(nodeItems(TWO_OUTPUTS, 'Split')).toEqual([{ side: 'left' }]);
	});

	test('selects an output and a run', () => {
		expect(nodeItems(TWO_OUTPUTS, 'Split', { output: 1 })).toEqual([
			{ side: 'right', n: 1 },
			{ side: 'right', n: 2 },
		]);
		expect(nodeItems(TWO_OUTPUTS.data, 'Split', { runIndex: 1 })).toEqual([{ again: true }]);
	});

	test('an output without items is empty', () => {
		expect(nodeItems(TWO_OUTPUTS, 'Split', { output: 1, runIndex: 1 })).toEqual([]);
	});

	test('names a node that did not run and lists those that did', () => {
		expect(() => nodeItems(TWO_OUTPUTS, 'Upload')).toThrow(
			'Node "Upload" has no run 0 (nodes that ran: Start, Split, Broken)',
		);
		expect(() => nodeItems(TWO_OUTPUTS, 'Start', { runIndex: 1 })).toThrow(
			'Node "Start" has no run 1',
		);
	});

	test('names a node that failed', () => {
		expect(() => nodeItems(TWO_OUTPUTS, 'Broken')).toThrow('Node "Broken" failed: went wrong');
	});
});

describe('runError', () => {
	test('is undefined for a successful run', () => {
		expect(runError(TWO_OUTPUTS)).toBeUndefined();
	});

	test('gives the message, node and description of a failed run', () => {
		const run = runOf({
			resultData: {
				runData: {},
				error: {
					message: 'Bad request',
					description: 'customerId unknown',
					node: { name: 'Upload' },
				},
			},
		});

		expect(runError(run)).toEqual({
			message: 'Bad request',
			node: 'Upload',
			description: 'customerId unknown',
		});
		expect(runError(run.data)).toEqual({
			message: 'Bad request',
			node: 'Upload',
			description: 'customerId unknown',
		});
	});

	test('falls back to the last node that ran for errors that do not name their node', () => {
		const run = runOf({
			resultData: { runData: {}, lastNodeExecuted: 'Code', error: { message: 'boom [line 1]' } },
		});

		expect(runError(run)).toEqual({ message: 'boom [line 1]', node: 'Code' });
	});
});
