import { prepareRun } from './harness';

export default async function globalSetup(): Promise<void> {
	await prepareRun();
}
