import { timingSafeEqual } from 'node:crypto';

import type { EmulatorAccount, EmulatorCustomer } from './types';

export interface Authenticated {
	account: EmulatorAccount;
	index: number;
}

function sameText(a: string, b: string): boolean {
	const left = Buffer.from(a, 'utf8');
	const right = Buffer.from(b, 'utf8');
	return left.length === right.length && timingSafeEqual(left, right);
}

/** Basic authentication against the emulator's accounts; only the `Authorization` header counts. */
export function authenticate(
	header: string | undefined,
	accounts: EmulatorAccount[],
): Authenticated | null {
	if (!header) return null;
	const match = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
	if (!match) return null;
	const decoded = Buffer.from(match[1], 'base64').toString('utf8');
	const colon = decoded.indexOf(':');
	if (colon < 0) return null;
	const username = decoded.slice(0, colon);
	const password = decoded.slice(colon + 1);
	const index = accounts.findIndex((a) => a.username === username);
	if (index < 0 || !sameText(accounts[index].password, password)) return null;
	return { account: accounts[index], index };
}

export type CustomerResolution = { ok: true; customer: EmulatorCustomer | null } | { ok: false };

/**
 * Resolves the `customerId`/`customerIdType` pair. Where the headers are optional, they are still
 * checked when either of them is sent, so a wrong value never goes unnoticed.
 */
export function resolveCustomer(
	account: EmulatorAccount,
	customerId: string | undefined,
	customerIdType: string | undefined,
	required: boolean,
): CustomerResolution {
	if (customerId === undefined && customerIdType === undefined) {
		return required ? { ok: false } : { ok: true, customer: null };
	}
	if (customerId === undefined || customerIdType === undefined) return { ok: false };
	const id = customerId.trim();
	let customer: EmulatorCustomer | undefined;
	if (customerIdType === 'ServiceID') {
		if (!/^\d+$/.test(id)) return { ok: false };
		customer = account.customers.find((c) => c.serviceId === Number(id));
	} else if (customerIdType === 'ExternalID') {
		customer = account.customers.find((c) => c.externalId !== null && c.externalId === id);
	}
	return customer ? { ok: true, customer } : { ok: false };
}
