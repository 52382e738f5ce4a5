import { cleanRun } from './harness';

export default async function globalTeardown(): Promise<void> {
	await cleanRun();
}
