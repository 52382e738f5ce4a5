// GET /api/auth/me: the environment information of the account and customer.
import { environmentInfo } from '../fixtures';
import { json, type Reply } from '../replies';
import { route, type RequestContext, type Route, type Service } from './route';

export function authRoutes(service: Service): Route[] {
	return [route('GET /api/auth/me', /^\/api\/auth\/me$/, 'optional', (c) => me(service, c))];
}

function me({ options, store }: Service, context: RequestContext): Reply {
	const { account, index } = context.auth;
	const customer = context.customer ?? account.customers[0];
	return json(200, environmentInfo(account, index, customer, options.environment, store.now()));
}
