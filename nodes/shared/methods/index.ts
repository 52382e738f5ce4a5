/** What the editor asks both nodes for while a workflow is edited: its list searches. */
export * as listSearch from './listSearch';
