import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
	INodeProperties,
} from 'n8n-workflow';
import { getRequestHelperFunctions } from 'n8n-core/dist/execution-engine/node-execution-context/utils/request-helpers/factory';

import { ProductDataIntegrationApi } from '../../credentials/ProductDataIntegrationApi.credentials';
import { bucketTerms, checkBaseUrl } from '../../nodes/shared/transport';
import { startEmulator } from '../../scripts/emulator';
import {
	authenticateRequest,
	resolveCredentialData,
	resolveCredentialExpression,
} from '../../scripts/n8n/in-process';
import { FAST_BUCKET, useEmulator } from '../helpers/emulator';
import { postControl } from '../helpers/service';

const credential = new ProductDataIntegrationApi();

function property(name: string): INodeProperties {
	const found = credential.properties.find((p) => p.name === name);
	if (!found) throw new Error(`No property ${name}`);
	return found;
}

const data: ICredentialDataDecryptedObject = {
	environment: 'test',
	baseUrl: 'https://svc.example.com/',
	username: 'integration-user',
	password: 'integration-secret',
	customerId: 'SHOP-NORTH',
	customerIdType: 'ExternalID',
};

describe('credential definition', () => {
	it('is the type workflows name', () => {
		expect(credential.name).toBe('productDataIntegrationApi');
		expect(credential.displayName).toBe('Product Data Integration API');
		expect(credential.icon).toEqual({
			light: 'file:../icons/productDataIntegration.svg',
			dark: 'file:../icons/productDataIntegration.dark.svg',
		});
		expect(credential.documentationUrl).toMatch(/^https:\/\//);
	});

	it('has the fields the transport and the nodes read', () => {
		expect(credential.properties.map((p) => p.name)).toEqual([
			'environment',
			'baseUrl',
			'username',
			'password',
			'customerId',
			'customerIdType',
			'serviceTimeZone',
			'requestTimeoutSeconds',
			'customRateLimit',
			'bucketCapacity',
			'leakIntervalSeconds',
			'rateLimitSharing',
			'redisHost',
			'redisPort',
			'redisDatabase',
			'redisUser',
			'redisPassword',
			'redisSsl',
			'redisDisableTlsVerification',
		]);
		expect(
			property('environment').options?.map((o) => ('value' in o ? o.value : undefined)),
		).toEqual(['production', 'test']);
		expect(
			property('customerIdType').options?.map((o) => ('value' in o ? o.value : undefined)),
		).toEqual(['ServiceID', 'ExternalID']);
		expect(property('password').typeOptions?.password).toBe(true);
		expect(property('baseUrl').required).toBe(true);
		expect(property('baseUrl').description).toMatch(/https:\/\//);
		expect(property('baseUrl').description).toMatch(/localhost/);
		expect(property('bucketCapacity').default).toBe(50);
		expect(property('leakIntervalSeconds').default).toBe(5);
		expect(property('rateLimitSharing').default).toBe('automatic');
		expect(property('redisPassword').typeOptions?.password).toBe(true);
	});

	it('authenticates with Basic auth and the customer headers', async () => {
		const options = await authenticateRequest(data, {
			url: 'https://svc.example.com/api/auth/me',
			headers: {},
		});
		expect(options.auth).toEqual({ username: 'integration-user', password: 'integration-secret' });
		expect(options.headers).toEqual({ customerId: 'SHOP-NORTH', customerIdType: 'ExternalID' });
	});

	it('tests the connection with GET /api/auth/me below the base URL', () => {
		const test = credential.test as ICredentialTestRequest;
		expect(test.request.method).toBe('GET');
		expect(test.request.url).toBe('/api/auth/me');
		expect(resolveCredentialExpression(test.request.baseURL as string, data)).toBe(
			'https://svc.example.com/',
		);
	});

	it('never tests a plain-http address of another host without encryption', () => {
		const baseURL = (credential.test as ICredentialTestRequest).request.baseURL as string;
		const testedAt = (baseUrl: string) =>
			resolveCredentialExpression(baseURL, { ...data, baseUrl });
		expect(testedAt('http://svc.example.com')).toBe('https://svc.example.com');
		expect(testedAt(' HTTP://127.0.0.1.example.com:8080/x ')).toBe(
			'https://127.0.0.1.example.com:8080/x',
		);
		expect(testedAt('http://localhost.example.com')).toBe('https://localhost.example.com');
		expect(testedAt('http://127.0.0.1:8470')).toBe('http://127.0.0.1:8470');
		expect(testedAt('http://localhost:8470/')).toBe('http://localhost:8470/');
		expect(testedAt('http://[::1]:8470')).toBe('http://[::1]:8470');
		expect(testedAt('https://svc.example.com')).toBe('https://svc.example.com');
	});

	it('cleans the address as the URL parser does before deciding on https', () => {
		const baseURL = (credential.test as ICredentialTestRequest).request.baseURL as string;
		const testedAt = (baseUrl: string) =>
			resolveCredentialExpression(baseURL, { ...data, baseUrl });
		for (const hidden of [
			'\u0001http://svc.example.com',
			'ht\ttp://svc.example.com',
			'http\n://svc.example.com',
			'\u0000 http://svc.example.com\u001f',
			'h\rttp://svc.example.com',
		]) {
			const tested = testedAt(hidden);
			expect(new URL(tested).protocol).toBe('https:');
			expect(new URL(tested).host).toBe('svc.example.com');
		}
		expect(testedAt('\u0001http://127.0.0.1:8470')).toBe('http://127.0.0.1:8470');
	});

	it('agrees with the nodes on which plain-http addresses are this machine', () => {
		const baseURL = (credential.test as ICredentialTestRequest).request.baseURL as string;
		const testedAt = (baseUrl: string) =>
			resolveCredentialExpression(baseURL, { ...data, baseUrl });
		for (const url of [
			'http://localhost:1',
			'HTTP://LOCALHOST:1/',
			'http://127.0.0.1',
			'http://127.1.2.3:9/x',
			'http://[::1]:5',
			'http://[::ffff:7f00:1]:5',
			'http://[::ffff:a00:1]:5',
			'http://svc.example.com',
			'http://10.0.0.1',
			'http://localhost.example.com',
			'http://127.0.0.1.example.com',
			'\u0001http://svc.example.com',
			'ht\ttp://svc.example.com',
			'h\rttp://localhost:1',
		]) {
			const allowedByNodes = (() => {
				try {
					checkBaseUrl(url);
					return true;
				} catch {
					return false;
				}
			})();
			expect(new URL(testedAt(url)).protocol).toBe(allowedByNodes ? 'http:' : 'https:');
		}
	});

	it('tests a spelling of this machine that the URL parser rewrites over https, never the other way round', () => {
		const baseURL = (credential.test as ICredentialTestRequest).request.baseURL as string;
		const testedAt = (baseUrl: string) =>
			resolveCredentialExpression(baseURL, { ...data, baseUrl });
		expect(checkBaseUrl('http://127.1:8470')).toBe('http://127.0.0.1:8470');
		expect(testedAt('http://127.1:8470')).toBe('https://127.1:8470');
	});

	it('never follows a redirect with the credentials', () => {
		const { request } = credential.test as ICredentialTestRequest;
		expect(request.disableFollowRedirect).toBe(true);
		expect(request.maxRedirects).toBe(0);
		expect(request.sendCredentialsOnCrossOriginRedirect).toBe(false);
	});
});

describe('rate-limit terms', () => {
	it('are the standard ones unless the account has its own', () => {
		// Hidden fields are dropped by n8n when the toggle is off, whatever was stored before.
		const standard = resolveCredentialData({ ...data, bucketCapacity: 10, leakIntervalSeconds: 1 });
		expect(bucketTerms(standard)).toEqual({ capacity: 50, intervalMs: 5000 });
		const custom = resolveCredentialData({
			...data,
			customRateLimit: true,
			bucketCapacity: 100,
			leakIntervalSeconds: 2.5,
		});
		expect(bucketTerms(custom)).toEqual({ capacity: 100, intervalMs: 2500 });
		expect(bucketTerms(resolveCredentialData({ ...data, customRateLimit: true }))).toEqual({
			capacity: 50,
			intervalMs: 5000,
		});
	});
});

describe('connection test against the emulator', () => {
	const { emulator, credentials } = useEmulator(FAST_BUCKET);

	/**
	 * What n8n's credential tester does with a declarative test: send the test request with the
	 * credential applied, then report a matching rule's message for a failed status.
	 */
	async function runTest(
		credentials: ICredentialDataDecryptedObject,
	): Promise<{ status: 'OK' | 'Error'; message: string }> {
		const test = credential.test as ICredentialTestRequest;
		const options: IHttpRequestOptions = await authenticateRequest(credentials, {
			...test.request,
			baseURL: resolveCredentialExpression(test.request.baseURL as string, credentials),
			url: test.request.url as string,
			headers: {},
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
		} as IHttpRequestOptions);
		const helpers = getRequestHelperFunctions({} as never, {} as never, {} as never);
		const response = (await helpers.httpRequest(options)) as IN8nHttpFullResponse;
		if (response.statusCode >= 200 && response.statusCode < 300)
			return { status: 'OK', message: 'Connection successful!' };
		for (const rule of test.rules ?? []) {
			if (rule.type === 'responseCode' && rule.properties.value === response.statusCode) {
				return { status: 'Error', message: rule.properties.message };
			}
		}
		return { status: 'Error', message: `Received HTTP status code: ${response.statusCode}` };
	}

	const account = (url: string, overrides: ICredentialDataDecryptedObject = {}) =>
		resolveCredentialData(credentials({ baseUrl: url, ...overrides }));

	it('succeeds with the right username and password', async () => {
		expect(await runTest(account(`${emulator.url}/`))).toEqual({
			status: 'OK',
			message: 'Connection successful!',
		});
	});

	it('names the likely cause of a 401', async () => {
		const result = await runTest(account(emulator.url, { password: 'wrong' }));
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/check the username and password/);
	});

	it('does not follow a Base URL that redirects, nor send the credentials on', async () => {
		const elsewhere = await startEmulator();
		try {
			await postControl(emulator.url, 'faults', {
				count: 1,
				kind: 'redirect',
				location: `${elsewhere.url}/api/auth/me`,
				path: '/api/auth/me',
			});
			const result = await runTest(account(emulator.url));
			expect(result).toEqual({
				status: 'Error',
				message: expect.stringMatching(/redirects elsewhere.*\(302\)/),
			});
			expect(elsewhere.stats().requests).toEqual({});
		} finally {
			await elsewhere.close();
		}
	});

	it('names the likely cause of a 404 (base URL with /api or a wrong path)', async () => {
		const result = await runTest(account(`${emulator.url}/api`));
		expect(result.status).toBe('Error');
		expect(result.message).toMatch(/without \/api/);
	});
});
