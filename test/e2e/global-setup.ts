import { prepareRun, type JestRunConfig } from './harness';

export default async function globalSetup(config: JestRunConfig): Promise<void> {
	await prepareRun(config);
}
