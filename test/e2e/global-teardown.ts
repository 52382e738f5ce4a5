import { cleanRun } from './harness';

export default function globalTeardown(): void {
	cleanRun();
}
