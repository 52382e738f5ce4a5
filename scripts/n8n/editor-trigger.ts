/**
 * The trigger node the editor's "Execute workflow" button starts a workflow from, chosen as the
 * editor of n8n 2.41 chooses it when the workflow opens: of the enabled trigger nodes (node types of
 * the group 'trigger'), a Chat Trigger aside, a Form Trigger first, then a Webhook, then a trigger of
 * an app (any node type outside n8n's Core Nodes, such as this package's trigger), then a Schedule
 * Trigger, a Manual Trigger, an Execute Workflow Trigger, an Error Trigger, and last any other core
 * trigger; between two of a kind, the one first in the workflow's list of nodes. The order of the
 * nodes does not put a Manual Trigger before a Schedule Trigger: such a workflow runs from its
 * schedule, which in a manual run fires once, at once.
 */

export interface TriggerCandidate {
	name: string;
	type: string;
	typeVersion: number;
	disabled?: boolean;
}

/** What the choice reads of a node type's description (POST /rest/node-types answers it). */
export interface NodeTypeFacts {
	group: string[];
	codex?: { categories?: string[] };
}

const CHAT_TRIGGER = '@n8n/n8n-nodes-langchain.chatTrigger';

/** The editor's ranks; a type not listed ranks 8 (an app) or 0 (a core node). */
const RANKS: Record<string, number> = {
	'n8n-nodes-base.formTrigger': 10,
	'n8n-nodes-base.webhook': 9,
	'n8n-nodes-base.scheduleTrigger': 7,
	'n8n-nodes-base.manualTrigger': 6,
	'n8n-nodes-base.executeWorkflowTrigger': 5,
	'n8n-nodes-base.errorTrigger': 4,
};
const APP_RANK = 8;
const CORE_RANK = 0;

/**
 * The name of the trigger the editor runs `nodes` from, undefined when none can run; `describe`
 * gives a node type's description, undefined for a type n8n does not know (not a trigger then).
 */
export function editorTriggerName(
	nodes: TriggerCandidate[],
	describe: (node: TriggerCandidate) => NodeTypeFacts | undefined,
): string | undefined {
	const rank = (node: TriggerCandidate, facts: NodeTypeFacts): number =>
		RANKS[node.type] ??
		(facts.codex?.categories?.includes('Core Nodes') === true ? CORE_RANK : APP_RANK);
	const triggers = nodes.flatMap((node) => {
		const facts = describe(node);
		if (!facts?.group.includes('trigger') || node.disabled === true || node.type === CHAT_TRIGGER)
			return [];
		return [{ node, rank: rank(node, facts) }];
	});
	// A stable sort: between equal ranks the workflow's order stands.
	return triggers.sort((a, b) => b.rank - a.rank)[0]?.node.name;
}
