/**
 * A parameter that only names a property of the item is read from the item's json directly: the
 * value must be the one n8n-core's own getNodeParameter gives for the same node and item, and where
 * the property is no string, number or boolean n8n itself reads it, values and errors alike.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { productEntry } from '../../nodes/ProductDataIntegration/actions/document/changedProducts/products';
import type { XmlDocument } from '../../nodes/ProductDataIntegration/actions/document/documents';
import { planUpload } from '../../nodes/ProductDataIntegration/actions/document/sendDocuments';
import { uploadSettings } from '../../nodes/ProductDataIntegration/actions/document/uploadSettings';
import { RunParameters } from '../../nodes/ProductDataIntegration/actions/runParameters';
import { customerScope } from '../../nodes/shared/transport';
import { createContext, type TestContext } from '../../scripts/n8n/in-process';

const CREDENTIALS = { baseUrl: 'https://service.example', username: 'user', password: 'secret' };

const ITEM: IDataObject = {
	url: 'https://shop.example/photo/p1.jpg',
	count: 7,
	zero: 0,
	fraction: -2.5,
	yes: true,
	no: false,
	empty: '',
	'a b': 'spaced',
	größe: 'XL',
	名前: '写真',
	'': 'empty key',
	'a.b': 'dotted key',
	class: 'reserved word',
	nested: { deep: { value: 'deep' }, count: 3, 'x y': 'spaced inside' },
	nothing: null,
	list: ['x', 'y'],
	object: { a: 1 },
	text: 'abc',
	infinite: Infinity,
	notANumber: NaN,
};

/** A second item with other values, so that each item is seen to read its own. */
const OTHER: IDataObject = {
	...ITEM,
	url: 'https://shop.example/photo/p2.jpg',
	count: 8,
	yes: false,
	empty: 'no longer empty',
	größe: 'S',
	nested: { deep: { value: 'other' }, count: 4, 'x y': 'other inside' },
	nothing: 'something',
};

const ITEMS: INodeExecutionData[] = [{ json: ITEM }, { json: OTHER }];

function contextWith(parameters: IDataObject, items = ITEMS): TestContext {
	return createContext({
		credentials: CREDENTIALS,
		nodeParameters: {
			resource: 'image',
			operation: 'upload',
			imagesFrom: 'url',
			...parameters,
		},
		items,
	});
}

type Outcome = { value: unknown } | { error: string };

function outcome(read: () => unknown): Outcome {
	try {
		return { value: read() };
	} catch (error) {
		return { error: (error as Error).message };
	}
}

/**
 * What the run's parameters and n8n's getNodeParameter give for each item, in separate contexts of
 * the same node, and how many parameters n8n evaluated for the run's parameters.
 */
function bothWays(name: string, parameters: IDataObject, items = ITEMS) {
	const ours = contextWith(parameters, items);
	const evaluated = jest.spyOn(ours, 'getNodeParameter');
	const run = new RunParameters(ours);
	const n8n = contextWith(parameters, items);
	return items.map((_, itemIndex) => ({
		ours: outcome(() => run.read(name, itemIndex, undefined)),
		n8n: outcome(() => n8n.getNodeParameter(name, itemIndex, undefined)),
		evaluated: evaluated.mock.calls.splice(0).map(([parameter]) => parameter),
	}));
}

describe('a property of the item is read as n8n reads it', () => {
	it.each([
		['a string', '={{ $json.url }}'],
		['a number', '={{$json.count}}'],
		['zero', '={{   $json.zero   }}'],
		['a negative fraction', '={{ $json.fraction }}'],
		['true and false', '={{ $json.yes }}'],
		['false', '={{ $json.no }}'],
		['an empty string', '={{ $json.empty }}'],
		['a key with a space', '={{ $json["a b"] }}'],
		['a key in single quotes', "={{ $json['a b'] }}"],
		['a unicode name', '={{ $json.größe }}'],
		['a name in another script', '={{ $json.名前 }}'],
		['a unicode key in brackets', '={{ $json["名前"] }}'],
		['the empty key', '={{ $json[""] }}'],
		['a key with a dot', '={{ $json["a.b"] }}'],
		['a reserved word', '={{ $json.class }}'],
		['a nested path', '={{ $json.nested.deep.value }}'],
		['a nested number', '={{ $json.nested.count }}'],
		['brackets within a path', '={{ $json.nested["x y"] }}'],
		['line breaks inside the braces', '={{\n\t$json.url\n}}'],
	])('%s: no expression evaluated, the value n8n gives', (_, expression) => {
		for (const { ours, n8n, evaluated } of bothWays('photoUrl', { photoUrl: expression })) {
			expect(ours).toEqual(n8n);
			expect('value' in ours && ours.value !== undefined).toBe(true);
			expect(evaluated).toEqual([]);
		}
	});

	it('reads the item n8n means for each index, not the first', () => {
		const [first, second] = bothWays('photoUrl', { photoUrl: '={{ $json.url }}' });
		expect(first.ours).toEqual({ value: 'https://shop.example/photo/p1.jpg' });
		expect(second.ours).toEqual({ value: 'https://shop.example/photo/p2.jpg' });
	});

	it.each([
		['a missing property', '={{ $json.missing }}'],
		['null', '={{ $json.nothing }}'],
		['an object', '={{ $json.object }}'],
		['an array', '={{ $json.list }}'],
		['a property of a string', '={{ $json.text.length }}'],
		['a property of an array', '={{ $json.list.length }}'],
		['a property of a missing property', '={{ $json.missing.deep }}'],
		['a property of null', '={{ $json.nothing.deep }}'],
		['infinity', '={{ $json.infinite }}'],
		['not a number', '={{ $json.notANumber }}'],
	])('%s: n8n evaluates the parameter, its value or error unchanged', (_, expression) => {
		const items = ITEMS.map((item) => ({ json: { ...item.json, nothing: null } }));
		for (const { ours, n8n, evaluated } of bothWays('photoUrl', { photoUrl: expression }, items)) {
			expect(ours).toEqual(n8n);
			expect(evaluated).toEqual(['photoUrl']);
		}
	});

	it('decides for each item: null in one, a string in the next', () => {
		const read = bothWays('photoUrl', { photoUrl: '={{ $json.nothing }}' });
		expect(read.map((item) => item.ours)).toEqual(read.map((item) => item.n8n));
		expect(read[1].ours).toEqual({ value: 'something' });
		expect(read.map((item) => item.evaluated)).toEqual([['photoUrl'], []]);
	});

	it.each([
		['text around it', '=photo {{ $json.url }}'],
		['a method', '={{ $json.url.toUpperCase() }}'],
		['a default', '={{ $json.missing ?? "none" }}'],
		['another node', "={{ $('Start').item.json.url }}"],
		['$input', '={{ $input.item.json.url }}'],
		['$itemIndex', '={{ $itemIndex }}'],
		['the constructor', '={{ $json.constructor }}'],
	])('%s: n8n evaluates it for every item', (_, expression) => {
		for (const { ours, n8n, evaluated } of bothWays('photoUrl', { photoUrl: expression })) {
			expect(ours).toEqual(n8n);
			expect(evaluated).toEqual(['photoUrl']);
		}
	});

	it('a parameter without an expression is read once per run', () => {
		const items = bothWays('photoUrl', { photoUrl: 'https://shop.example/fixed.jpg' });
		expect(items.map((item) => item.ours)).toEqual(items.map((item) => item.n8n));
		expect(items.map((item) => item.evaluated)).toEqual([['photoUrl'], []]);
	});
});

describe('a collection whose expressions each name a property of the item', () => {
	const OPTIONS = {
		allowedInternalHosts: '127.0.0.1:8472',
		knownMd5: '={{ $json.knownMd5 }}',
		knownHashcode: '={{ $json["knownHashcode"] }}',
		knownVersion: '={{ $json.known.version }}',
		customer: { __rl: true, mode: 'serviceId', value: '1002' },
		invert: true,
		imagesPerRequest: 20,
	};
	const known = (md5: IDataObject[string], version: IDataObject[string]): INodeExecutionData => ({
		json: { knownMd5: md5, knownHashcode: 'h1', known: { version } },
	});

	it('is built from the item, its fixed entries read once per run, equal to n8n', () => {
		const items = [known('0'.repeat(32), 'v1'), known('', ''), known('f'.repeat(32), 'v2')];
		const read = bothWays('options', { options: OPTIONS }, items);
		for (const { ours, n8n } of read) expect(ours).toEqual(n8n);
		expect(read[1].ours).toEqual({
			value: {
				allowedInternalHosts: '127.0.0.1:8472',
				knownMd5: '',
				knownHashcode: 'h1',
				knownVersion: '',
				customer: { __rl: true, mode: 'serviceId', value: '1002' },
				invert: true,
				imagesPerRequest: 20,
			},
		});
		expect(read.map((item) => item.evaluated.sort())).toEqual([
			[
				'options.allowedInternalHosts',
				'options.customer',
				'options.imagesPerRequest',
				'options.invert',
			],
			[],
			[],
		]);
	});

	it('goes to n8n whole for an item where one value is not a string, number or boolean', () => {
		const items = [known(null, 'v1'), known('0'.repeat(32), { at: 'v1' }), known('a', 'v1')];
		const read = bothWays('options', { options: OPTIONS }, items);
		for (const { ours, n8n } of read) expect(ours).toEqual(n8n);
		expect(read.map((item) => item.evaluated.filter((name) => name === 'options'))).toEqual([
			['options'],
			['options'],
			[],
		]);
	});

	it('goes to n8n whole for every item where any entry is another expression', () => {
		const options = { ...OPTIONS, knownVersion: '=v{{ $json.known.version }}' };
		const read = bothWays('options', { options }, [known('a', '1'), known('b', '2')]);
		for (const { ours, n8n } of read) expect(ours).toEqual(n8n);
		expect(read.map((item) => item.evaluated)).toEqual([['options'], ['options']]);
	});
});

describe("Document Upload's Options", () => {
	it("are evaluated once per item, the Customer option with them, for the upload and for the product's memory", async () => {
		const context = createContext({
			credentials: CREDENTIALS,
			nodeParameters: {
				resource: 'document',
				operation: 'upload',
				source: 'text',
				xml: '<Products/>',
				// An expression n8n itself evaluates: not a plain property path.
				options: { customer: '={{ String($json.count + 1000) }}' },
			},
			items: ITEMS,
		});
		const settings = uploadSettings(context);
		const evaluated = jest.spyOn(context, 'getNodeParameter');
		const document: XmlDocument = {
			position: 0,
			itemIndexes: [1],
			fileName: null,
			bytes: 11,
			sha256: '',
			validation: 'passed',
		};
		const plan = planUpload(context, settings, document);
		const entry = await productEntry(context, 1, 'xml', 'P1', 'content', settings.customerOf(1));

		expect('upload' in plan && plan.upload.customer).toEqual({
			customerId: '1008',
			customerIdType: 'ServiceID',
		});
		expect(entry.destination).toBe(customerScope(CREDENTIALS, settings.customerOf(1), 'xml'));
		expect(evaluated.mock.calls.map(([name]) => name)).toEqual(['options']);
	});

	it('are evaluated once per item with Wait for Completion, its wait taking the customer from them', () => {
		const context = createContext({
			credentials: CREDENTIALS,
			nodeParameters: {
				resource: 'document',
				operation: 'upload',
				source: 'text',
				xml: '<Products/>',
				options: { customer: '={{ String($json.count + 1000) }}', waitForCompletion: true },
			},
			items: ITEMS,
		});
		const settings = uploadSettings(context);
		const evaluated = jest.spyOn(context, 'getNodeParameter');
		const document: XmlDocument = {
			position: 0,
			itemIndexes: [1],
			fileName: null,
			bytes: 11,
			sha256: '',
			validation: 'passed',
		};
		const plan = planUpload(context, settings, document);

		const customer = { customerId: '1008', customerIdType: 'ServiceID' };
		expect('upload' in plan && plan.upload.customer).toEqual(customer);
		expect('upload' in plan && plan.upload.wait?.customer).toEqual(customer);
		expect(evaluated.mock.calls.map(([name]) => name)).toEqual(['options']);
	});
});
