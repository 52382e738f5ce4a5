import {
	editorTriggerName,
	type NodeTypeFacts,
	type TriggerCandidate,
} from '../../../scripts/n8n/editor-trigger';

const CORE_TRIGGER: NodeTypeFacts = { group: ['trigger'], codex: { categories: ['Core Nodes'] } };
const APP_TRIGGER: NodeTypeFacts = { group: ['trigger'], codex: { categories: ['Marketing'] } };
const ACTION: NodeTypeFacts = { group: ['transform'], codex: { categories: ['Core Nodes'] } };

const FACTS: Record<string, NodeTypeFacts> = {
	'n8n-nodes-base.manualTrigger': CORE_TRIGGER,
	'n8n-nodes-base.scheduleTrigger': CORE_TRIGGER,
	'n8n-nodes-base.webhook': CORE_TRIGGER,
	'n8n-nodes-base.formTrigger': CORE_TRIGGER,
	'n8n-nodes-base.executeWorkflowTrigger': CORE_TRIGGER,
	'n8n-nodes-base.errorTrigger': CORE_TRIGGER,
	'n8n-nodes-base.rssFeedReadTrigger': CORE_TRIGGER,
	'@n8n/n8n-nodes-langchain.chatTrigger': CORE_TRIGGER,
	'n8n-nodes-product-data-integration.productDataIntegrationTrigger': { group: ['trigger'] },
	'n8n-nodes-base.githubTrigger': APP_TRIGGER,
	'n8n-nodes-base.code': ACTION,
};

function node(name: string, type: string, disabled?: boolean): TriggerCandidate {
	return {
		name,
		type: type.includes('.') ? type : `n8n-nodes-base.${type}`,
		typeVersion: 1,
		disabled,
	};
}

const pick = (nodes: TriggerCandidate[]) => editorTriggerName(nodes, (each) => FACTS[each.type]);

describe("the trigger the editor's Execute workflow button starts from", () => {
	test('a Schedule Trigger before a Manual Trigger, whichever comes first in the workflow', () => {
		const manual = node('When clicking', 'manualTrigger');
		const schedule = node('Every Night', 'scheduleTrigger');
		expect(pick([manual, schedule, node('Code', 'code')])).toBe('Every Night');
		expect(pick([schedule, manual])).toBe('Every Night');
	});

	test("the editor's order: form, webhook, an app's trigger, schedule, manual, sub-workflow, error, other core triggers", () => {
		const ranked = [
			node('Form', 'formTrigger'),
			node('Hook', 'webhook'),
			node('Our Trigger', 'n8n-nodes-product-data-integration.productDataIntegrationTrigger'),
			node('Schedule', 'scheduleTrigger'),
			node('Manual', 'manualTrigger'),
			node('Called', 'executeWorkflowTrigger'),
			node('On Error', 'errorTrigger'),
			node('Feed', 'rssFeedReadTrigger'),
		];
		for (let index = 0; index < ranked.length; index++) {
			expect(pick(ranked.slice(index).reverse())).toBe(ranked[index].name);
		}
	});

	test('between two of a kind the first in the workflow; disabled nodes, Chat Triggers and other nodes never', () => {
		expect(pick([node('B', 'manualTrigger'), node('A', 'manualTrigger')])).toBe('B');
		expect(pick([node('Off', 'scheduleTrigger', true), node('On', 'manualTrigger')])).toBe('On');
		expect(pick([node('Chat', '@n8n/n8n-nodes-langchain.chatTrigger')])).toBeUndefined();
		expect(pick([node('Code', 'code'), node('Unknown', 'n8n-nodes-base.gone')])).toBeUndefined();
		expect(pick([node('GitHub', 'githubTrigger'), node('Schedule', 'scheduleTrigger')])).toBe(
			'GitHub',
		);
	});
});
