// What n8n's credential tester does with the package's credential before it sends the test request:
// its expressions resolved, its authentication applied, as for a node that declares it.
import type { ICredentialDataDecryptedObject, IHttpRequestOptions, INode } from 'n8n-workflow';

// '.node.js' because tsx would resolve '.node' to the codex file next to it (.node.json).
import { ProductDataIntegration } from '../../../nodes/ProductDataIntegration/ProductDataIntegration.node.js';
import { HarnessCredentialsHelper, packageCredential, resolveCredentialText } from './credentials';
import { createWorkflow } from './execute';
import { NODE_NAME, nodeTypeName, nodeUnderTest } from './nodeTypes';

function actionNodeWorkflow() {
	const nodeType = new ProductDataIntegration();
	const workflow = createWorkflow([nodeUnderTest(nodeType, {})], {
		[nodeTypeName(nodeType)]: nodeType,
	});
	return { workflow, node: workflow.getNode(NODE_NAME) as INode };
}

/** Resolves an expression of the credential (e.g. its test request's base URL) as n8n does. */
export function resolveCredentialExpression(
	text: string,
	credentials: ICredentialDataDecryptedObject,
): string {
	const { workflow, node } = actionNodeWorkflow();
	return resolveCredentialText(workflow, node, credentials, text);
}

/** Applies the credential's `authenticate` to request options as n8n does before sending. */
export async function authenticateRequest(
	credentials: ICredentialDataDecryptedObject,
	requestOptions: IHttpRequestOptions,
): Promise<IHttpRequestOptions> {
	const { workflow, node } = actionNodeWorkflow();
	return await new HarnessCredentialsHelper(credentials).authenticate(
		credentials,
		packageCredential.name,
		requestOptions,
		workflow,
		node,
	);
}
