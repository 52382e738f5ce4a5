import {
	serviceRequest,
	type ServiceRequest,
	type ServiceResponse,
} from '../../nodes/shared/transport';
import type { TestContext } from '../../scripts/n8n/in-process';

/** The transport's request, made as a node would make it from `context`. */
export async function callService<T = unknown>(
	context: TestContext,
	request: ServiceRequest,
): Promise<ServiceResponse<T>> {
	return await serviceRequest<T>(context, request);
}

/** The error `promise` rejects with; a promise that resolves fails the test. */
export async function failure(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
	try {
		await promise;
	} catch (error) {
		return error as Error & Record<string, unknown>;
	}
	throw new Error('Expected the request to fail');
}

/** Sends `body` to one of the emulator's control routes (faults, bucket, ...) and checks it was taken. */
export async function postControl(
	emulatorUrl: string,
	route: string,
	body: unknown,
): Promise<void> {
	const response = await fetch(`${emulatorUrl}/__emulator/${route}`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(body),
	});
	expect(response.status).toBe(200);
}
