import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { isSafeObjectProperty } from 'n8n-workflow';

/** A value an item's json gives as it is: n8n's expression returns it unchanged. */
type PlainValue = string | number | boolean;

/**
 * How a run reads one parameter, decided from its raw value once per run: `fixed` holds no
 * expression (every item reads the same value), `path` is exactly `{{ $json.a.b }}`, `collection`
 * a collection whose entries are each fixed or such a path, `n8n` anything else.
 */
type Plan =
	| { kind: 'fixed'; value: unknown }
	| { kind: 'path'; path: string[] }
	| { kind: 'collection'; entries: Array<{ key: string; path: string[] | undefined }> }
	| { kind: 'n8n' };

const WHOLE_EXPRESSION = /^=\{\{\s*\$json((?:\.[^.[\]\s]+|\[(?:"[^"]*"|'[^']*')\])+)\s*\}\}$/u;
const SEGMENT = /\.([^.[\]\s]+)|\[(?:"([^"]*)"|'([^']*)')\]/gu;
const IDENTIFIER = /^[\p{ID_Start}$_][\p{ID_Continue}$\u200C\u200D]*$/u;
/** A collection entry's name as n8n's parameter paths (`options.knownMd5`) take it. */
const ENTRY_NAME = /^[A-Za-z_$][\w$]*$/;

/**
 * The property path of a parameter's raw value that is exactly one plain read of the item's json:
 * `={{ $json.a }}`, `={{ $json.a.b }}`, `={{ $json["a b"] }}` or `={{ $json['a'] }}`, with spaces
 * inside the braces only. Anything else (text around the braces, other variables, calls, computed or
 * numeric keys, escapes, braces in a key, a name n8n's expressions refuse to read) is undefined: n8n
 * evaluates it.
 */
export function itemPathOf(raw: unknown): string[] | undefined {
	if (typeof raw !== 'string') return undefined;
	const match = WHOLE_EXPRESSION.exec(raw);
	if (!match) return undefined;
	const path: string[] = [];
	for (const segment of match[1].matchAll(SEGMENT)) {
		const [, name, doubleQuoted, singleQuoted] = segment;
		if (name !== undefined && !IDENTIFIER.test(name)) return undefined;
		const key = name ?? doubleQuoted ?? singleQuoted;
		if (/[\\{}\n\r\u2028\u2029]/u.test(key) || !isSafeObjectProperty(key)) return undefined;
		path.push(key);
	}
	return path;
}

function isPlainObject(value: unknown): value is IDataObject {
	if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
	const prototype = Object.getPrototypeOf(value) as unknown;
	return prototype === Object.prototype || prototype === null;
}

/**
 * The string, finite number or boolean at a path of the item's json, read through plain objects
 * and their own properties only; undefined for anything else, which n8n then evaluates itself.
 */
function plainValueAt(json: unknown, path: readonly string[]): PlainValue | undefined {
	let value: unknown = json;
	for (const key of path) {
		if (!isPlainObject(value) || !Object.prototype.hasOwnProperty.call(value, key))
			return undefined;
		value = value[key];
	}
	if (typeof value === 'string' || typeof value === 'boolean') return value;
	if (typeof value === 'number' && Number.isFinite(value)) return value;
	return undefined;
}

/** Whether a parameter's value holds an expression: without one, every item reads the same value. */
function holdsExpression(value: unknown): boolean {
	if (typeof value === 'string') return value.startsWith('=');
	if (typeof value === 'object' && value !== null)
		return Object.values(value).some(holdsExpression);
	return false;
}

/**
 * The node's parameters as the items of one run read them. n8n evaluates every expression of a
 * parameter for every item, which costs about 0.3 ms even for `{{ $json.url }}`: a quiet night of
 * tens of thousands of items spends most of its time there. So a parameter without an expression
 * is read once per run, and one that only names a property of the item (also inside a collection
 * such as Options) is read from the item's json directly, its expression parsed once per run.
 * Where that property is not a string, number or boolean (missing, null, an object), n8n reads the
 * whole parameter as always, so its values and its errors stay n8n's own.
 */
export class RunParameters {
	private readonly plans = new Map<string, Plan>();

	private items: ReturnType<IExecuteFunctions['getInputData']> | undefined;

	constructor(private readonly context: IExecuteFunctions) {}

	read(name: string, itemIndex: number, fallback: unknown): unknown {
		const plan = this.planOf(name, itemIndex, fallback);
		switch (plan.kind) {
			case 'fixed':
				return plan.value;
			case 'path': {
				const value = plainValueAt(this.jsonOf(itemIndex), plan.path);
				return value === undefined ? this.evaluate(name, itemIndex, fallback) : value;
			}
			case 'collection':
				return this.collection(name, plan.entries, itemIndex, fallback);
			case 'n8n':
				return this.evaluate(name, itemIndex, fallback);
		}
	}

	private planOf(name: string, itemIndex: number, fallback: unknown): Plan {
		let plan = this.plans.get(name);
		if (!plan) {
			plan = this.plan(name, itemIndex, fallback);
			this.plans.set(name, plan);
		}
		return plan;
	}

	private plan(name: string, itemIndex: number, fallback: unknown): Plan {
		const raw = name
			.split('.')
			.reduce<unknown>(
				(value, key) => (isPlainObject(value) ? value[key] : undefined),
				this.context.getNode().parameters,
			);
		if (!holdsExpression(raw))
			return { kind: 'fixed', value: this.evaluate(name, itemIndex, fallback) };
		const path = itemPathOf(raw);
		if (path) return { kind: 'path', path };
		if (!isPlainObject(raw)) return { kind: 'n8n' };
		const entries = Object.entries(raw).map(([key, value]) => ({ key, path: itemPathOf(value) }));
		const plain = Object.entries(raw).every(
			([key, value], index) =>
				ENTRY_NAME.test(key) && (!holdsExpression(value) || entries[index].path !== undefined),
		);
		return plain ? { kind: 'collection', entries } : { kind: 'n8n' };
	}

	private collection(
		name: string,
		entries: Array<{ key: string; path: string[] | undefined }>,
		itemIndex: number,
		fallback: unknown,
	): unknown {
		const json = this.jsonOf(itemIndex);
		const values: Record<string, unknown> = {};
		for (const { key, path } of entries) {
			if (path === undefined) {
				values[key] = this.read(`${name}.${key}`, itemIndex, undefined);
				continue;
			}
			const value = plainValueAt(json, path);
			if (value === undefined) return this.evaluate(name, itemIndex, fallback);
			values[key] = value;
		}
		return values;
	}

	private jsonOf(itemIndex: number): unknown {
		this.items ??= this.context.getInputData();
		return this.items[itemIndex]?.json;
	}

	private evaluate(name: string, itemIndex: number, fallback: unknown): unknown {
		return this.context.getNodeParameter(name, itemIndex, fallback);
	}
}
