import type { IExecuteFunctions, ILoadOptionsFunctions, IPollFunctions } from 'n8n-workflow';

/** Where a request can come from: a node run, a trigger's poll, a list in the editor. */
export type ServiceContext = IExecuteFunctions | IPollFunctions | ILoadOptionsFunctions;

/** A trigger's poll: n8n keeps its context for as long as the trigger is active. */
export function isPollContext(context: ServiceContext): context is IPollFunctions {
	return typeof (context as Partial<Pick<IPollFunctions, '__emit'>>).__emit === 'function';
}
