// Credentials, following n8n's CLI CredentialsHelper (packages/cli/src/credentials-helper.ts).
import type {
	ICredentialDataDecryptedObject,
	ICredentialType,
	IHttpRequestOptions,
	INode,
	INodeCredentialsDetails,
	INodeProperties,
	IRequestOptionsSimplified,
	IWorkflowExecuteAdditionalData,
	Workflow,
} from 'n8n-workflow';
import { ICredentialsHelper, UnexpectedError } from 'n8n-workflow';

import { ProductDataIntegrationApi } from '../../../credentials/ProductDataIntegrationApi.credentials';
import { applyGenericAuthentication, credentialDataOf } from '../context';

const credentialTypes = new Map<string, ICredentialType>();

export function registerCredentialType(type: ICredentialType): void {
	credentialTypes.set(type.name, type);
}

registerCredentialType(new ProductDataIntegrationApi());

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
				throw new UnexpectedError('Workflow and node are required for declarative credential authentication');
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
