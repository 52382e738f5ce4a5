// Credentials, following n8n's CLI CredentialsHelper (packages/cli/src/credentials-helper.ts).
import type {
	IAuthenticateGeneric,
	ICredentialDataDecryptedObject,
	ICredentialType,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeParameters,
	INodeProperties,
	IRequestOptionsSimplified,
	IWorkflowExecuteAdditionalData,
	Workflow,
} from 'n8n-workflow';
import { ICredentialsHelper, isExpression, NodeHelpers, UnexpectedError } from 'n8n-workflow';

import { ProductDataIntegrationApi } from '../../../credentials/ProductDataIntegrationApi.credentials';

const credentialTypes = new Map<string, ICredentialType>();

export function registerCredentialType(type: ICredentialType): void {
	credentialTypes.set(type.name, type);
}

export const packageCredential = new ProductDataIntegrationApi();
registerCredentialType(packageCredential);

/** What n8n hands a node from getCredentials: the type's defaults applied, hidden fields dropped. */
function credentialDataOf(
	type: ICredentialType,
	data: ICredentialDataDecryptedObject,
): ICredentialDataDecryptedObject {
	return NodeHelpers.getNodeParameters(
		type.properties,
		{ ...data } as INodeParameters,
		true,
		false,
		null,
		null,
	) as ICredentialDataDecryptedObject;
}

/** credentialDataOf for the package's own credential. */
export function resolveCredentialData(
	data: ICredentialDataDecryptedObject,
): ICredentialDataDecryptedObject {
	return credentialDataOf(packageCredential, data);
}

/** `text`, an expression of a credential type (e.g. its test request), resolved as n8n does. */
export function resolveCredentialText(
	workflow: Workflow,
	node: INode,
	credentials: ICredentialDataDecryptedObject,
	text: string,
): string {
	if (!isExpression(text)) return text;
	const value = workflow.expression.getSimpleParameterValue(
		node,
		text,
		'internal',
		{ $credentials: credentials },
		undefined,
		'',
	);
	return value ? String(value) : '';
}

/**
 * n8n's CredentialsHelper.authenticate for a declarative (generic) credential: each key and value
 * resolved with the expression engine and written into the request option of the same name
 * (headers, auth, qs, body).
 */
function applyGenericAuthentication(
	authenticate: IAuthenticateGeneric,
	credentials: ICredentialDataDecryptedObject,
	requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
	workflow: Workflow,
	node: INode,
): IHttpRequestOptions {
	const resolve = (text: string) => resolveCredentialText(workflow, node, credentials, text);
	requestOptions.headers ??= {};
	const target = requestOptions as unknown as Record<string, Record<string, string>>;
	for (const [option, entries] of Object.entries(authenticate.properties)) {
		for (const [key, value] of Object.entries(entries as Record<string, string>)) {
			target[option] ??= {};
			target[option][resolve(key)] = resolve(value);
		}
	}
	return requestOptions as IHttpRequestOptions;
}

export class HarnessCredentialsHelper extends ICredentialsHelper {
	constructor(private readonly data: ICredentialDataDecryptedObject) {
		super();
	}

	getParentTypes(name: string): string[] {
		const parents = credentialTypes.get(name)?.extends ?? [];
		return parents.flatMap((parent) => [parent, ...this.getParentTypes(parent)]);
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions | IRequestOptionsSimplified,
		workflow?: Workflow,
		node?: INode,
	): Promise<IHttpRequestOptions> {
		const authenticate = this.getType(typeName).authenticate;
		if (typeof authenticate === 'function') {
			return await authenticate(credentials, requestOptions as IHttpRequestOptions);
		}
		if (authenticate?.type === 'generic') {
			if (!workflow || !node) {
				throw new UnexpectedError(
					'Workflow and node are required for declarative credential authentication',
				);
			}
			return applyGenericAuthentication(authenticate, credentials, requestOptions, workflow, node);
		}
		return requestOptions as IHttpRequestOptions;
	}

	// None of our credential types refreshes a token; n8n does nothing here for them either.
	async preAuthentication(): Promise<undefined> {
		return undefined;
	}

	async runPreAuthentication(): Promise<undefined> {
		return undefined;
	}

	async getCredentials(): Promise<never> {
		throw new UnexpectedError('Stored credentials are not available in the test harness');
	}

	async getDecrypted(
		_additionalData: IWorkflowExecuteAdditionalData,
		_nodeCredentials: INodeCredentialsDetails,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		// n8n fills in the credential type's defaults and drops fields the type does not show
		// (e.g. advanced fields hidden by displayOptions); nodes see exactly that object.
		const known = credentialTypes.get(type);
		return known ? credentialDataOf(known, this.data) : { ...this.data };
	}

	async updateCredentials(): Promise<void> {
		throw new UnexpectedError('Credentials cannot be updated in the test harness');
	}

	async updateCredentialsOauthTokenData(): Promise<void> {
		throw new UnexpectedError('Credentials cannot be updated in the test harness');
	}

	getCredentialsProperties(type: string): INodeProperties[] {
		return this.getType(type).properties;
	}

	private getType(name: string): ICredentialType {
		const type = credentialTypes.get(name);
		if (!type) throw new UnexpectedError(`Unknown credential type "${name}": register it first`);
		return type;
	}
}
