import { createHash, createHmac } from 'node:crypto';

import type { EmulatorAccount, EmulatorCustomer } from './types';

export const DEFAULT_ACCOUNT: EmulatorAccount = {
	username: 'demo-integration',
	password: 'demo-password',
	customers: [
		{ serviceId: 1001, externalId: 'SHOP-NORTH', name: 'North Shop' },
		{ serviceId: 1002, externalId: 'SHOP-SOUTH', name: 'South Shop' },
		{ serviceId: 1003, externalId: null, name: 'Head Office' },
	],
};

export const SERVICE_VERSION = '1.7.3';

/** Fixed texts of the spec (400 and 401) and the emulator's choices where the spec is silent. */
export const MESSAGES = {
	invalid: 'The request is invalid.',
	tooLarge: 'The request is too large.',
	denied: 'Authorization has been denied for this request.',
	processing: 'The request is still being processed.',
	notFound: 'No HTTP resource was found that matches the request URI.',
	sessionNotFound: 'No upload session with this id exists.',
	methodNotAllowed: 'The requested resource does not support this HTTP method.',
	rateLimited: 'Too many requests: the leaky bucket of this account is full. Try again later.',
	internalError: 'An error has occurred.',
	unavailable: 'The service is temporarily unavailable.',
} as const;

/** Deterministic GUID-shaped string, so an account's fixture values do not change between runs. */
export function guidFrom(seed: string): string {
	const hex = createHash('sha1').update(seed).digest('hex');
	return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** ISO 8601 with an explicit `+00:00` offset, the form the spec shows for timestamps. */
export function isoWithOffset(ms: number): string {
	return new Date(ms).toISOString().replace('Z', '+00:00');
}

/** The customer node that head-office data hangs off has no external id in the fixtures. */
export function isHeadOffice(customer: EmulatorCustomer): boolean {
	return customer.externalId === null;
}

export function environmentInfo(
	account: EmulatorAccount,
	accountIndex: number,
	customer: EmulatorCustomer,
	environment: string,
	nowMs: number,
): Record<string, unknown> {
	const availableCustomers: Record<string, string> = {};
	for (const c of account.customers) availableCustomers[String(c.serviceId)] = c.name;
	const expireTime = isoWithOffset(nowMs + 24 * 60 * 60 * 1000);
	const hash = createHmac('sha256', `emulator-${environment}`)
		.update(`${account.username}|${customer.serviceId}|${expireTime}`)
		.digest('base64');
	const authToken = {
		version: 1,
		userName: account.username,
		customerId: customer.serviceId,
		expireTime,
		hash,
	};
	return {
		id: 5000 + accountIndex,
		userName: account.username,
		email: `${account.username}@example.com`,
		countryCode: 'NO',
		languageCode: 'nb',
		customerId: customer.serviceId,
		availableCountries: ['NO', 'SE', 'DK', 'FI'],
		availableLanguages: ['nb', 'sv', 'da', 'fi', 'en'],
		availableCustomers,
		subscribedStoreInfo: [],
		customerGroups: [],
		customerGroupGuids: [],
		validationGuid: guidFrom(`validation|${environment}|${account.username}`),
		addOns: ['Images', 'CustomXml'],
		legacyAddOns: ['Soap'],
		lockedServiceFields: [],
		productGroupSubscribeId: 0,
		authToken,
		authTokenBytes: Buffer.from(JSON.stringify(authToken), 'utf8').toString('base64'),
		currency: 'NOK',
		currencyFactor: 1,
		isHeadOffice: isHeadOffice(customer),
		versions: { service: SERVICE_VERSION },
	};
}
