/**
 * How close the client's rate limiting gets to the service's limit. See bench/README.md.
 * Prints one JSON line per scenario.
 */
import { DEFAULT_ACCOUNT, startEmulator } from '../scripts/emulator';
import { emulatorCredentials } from '../scripts/n8n/in-process';
import { sendFromCallers } from './callers';

const CAPACITY = 50;
const INTERVAL_MS = 20;
const REQUESTS = 300;
const CALLERS = 10;

interface Scenario {
	name: string;
	/** Level of the service's bucket before the run, filled by "another client". */
	prefill: number;
	requests: number;
	report: boolean;
}

async function run({ name, prefill, requests, report }: Scenario): Promise<void> {
	// A fresh emulator per scenario: a new base URL is a new account for the client's limiter too.
	const emulator = await startEmulator({ bucketCapacity: CAPACITY, leakIntervalMs: INTERVAL_MS });
	try {
		if (prefill > 0) {
			const response = await fetch(`${emulator.url}/__emulator/bucket`, {
				method: 'POST',
				headers: { 'content-type': 'application/json' },
				body: JSON.stringify({ username: DEFAULT_ACCOUNT.username, level: prefill }),
			});
			if (!response.ok) throw new Error(`Could not fill the bucket: ${response.status}`);
		}
		const credentials = emulatorCredentials(emulator, {
			customRateLimit: true,
			bucketCapacity: CAPACITY,
			leakIntervalSeconds: INTERVAL_MS / 1000,
		});
		const started = performance.now();
		const failed = await sendFromCallers(credentials, requests, CALLERS);
		const wallMs = performance.now() - started;
		// The fastest the service itself allows: what is free in its bucket at once, then one per
		// interval.
		const limitMs = (requests - (CAPACITY - prefill)) * INTERVAL_MS;
		if (!report) return;
		console.log(
			JSON.stringify({
				scenario: name,
				n: requests,
				wall_ms: Math.round(wallMs),
				limit_ms: limitMs,
				ratio: Number((wallMs / limitMs).toFixed(3)),
				rejected429: emulator.stats().rejected429,
				failed,
			}),
		);
	} finally {
		await emulator.close();
	}
}

async function main(): Promise<void> {
	// The first requests of a process are slow (code not yet compiled, first connections) and the
	// limiter rightly waits for them; that is start-up cost, not rate limiting, so it is paid here.
	await run({ name: 'warm-up', prefill: 0, requests: 60, report: false });
	await run({ name: 'clean', prefill: 0, requests: REQUESTS, report: true });
	await run({ name: 'prefilled', prefill: 40, requests: REQUESTS, report: true });
}

main().catch((error: unknown) => {
	console.error(error);
	process.exit(1);
});
