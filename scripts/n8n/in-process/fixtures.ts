// What tests hand to a run: binary items and credentials for the emulator.
import { prepareBinaryData } from 'n8n-core';
import type { ICredentialDataDecryptedObject, IDataObject, INodeExecutionData } from 'n8n-workflow';

import { DEFAULT_ACCOUNT, type Emulator } from '../../emulator';
import { WORKFLOW_ID } from './execute';
import { setUp } from './services';

/** Where binaryItem stores its data; n8n would use the execution that created the item. */
const FIXTURE_EXECUTION_ID = 'harness-fixtures';

export async function binaryItem(
	data: Buffer | string,
	fileName: string,
	mimeType: string,
	json: IDataObject = {},
): Promise<INodeExecutionData> {
	await setUp();
	const buffer = typeof data === 'string' ? Buffer.from(data) : data;
	const binary = await prepareBinaryData(
		buffer,
		FIXTURE_EXECUTION_ID,
		WORKFLOW_ID,
		fileName,
		mimeType,
	);
	return { json, binary: { data: binary } };
}

export function emulatorCredentials(
	emulator: Pick<Emulator, 'url'>,
	overrides: ICredentialDataDecryptedObject = {},
): ICredentialDataDecryptedObject {
	return {
		environment: 'production',
		baseUrl: emulator.url,
		username: DEFAULT_ACCOUNT.username,
		password: DEFAULT_ACCOUNT.password,
		customerId: '1001',
		customerIdType: 'ServiceID',
		...overrides,
	};
}
