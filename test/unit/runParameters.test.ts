/**
 * Which raw parameter values a run reads from the item's json itself: exactly one plain property
 * path on `$json`; everything else is left to n8n. Whether the values read so equal n8n's own:
 * test/integration/runParameters.test.ts.
 */
import { ProductDataIntegration } from '../../nodes/ProductDataIntegration/ProductDataIntegration.node';
import { itemPathOf } from '../../nodes/ProductDataIntegration/actions/runParameters';

describe('a plain property path on the item', () => {
	it.each([
		['={{ $json.url }}', ['url']],
		['={{$json.url}}', ['url']],
		['={{   $json.url\t}}', ['url']],
		['={{\n$json.url\n}}', ['url']],
		['={{ $json.a.b.c }}', ['a', 'b', 'c']],
		['={{ $json["a b"] }}', ['a b']],
		["={{ $json['a b'] }}", ['a b']],
		['={{ $json["it\'s"] }}', ["it's"]],
		['={{ $json[\'say "hi"\'] }}', ['say "hi"']],
		['={{ $json.a["b c"].d }}', ['a', 'b c', 'd']],
		['={{ $json[""] }}', ['']],
		['={{ $json["a.b"] }}', ['a.b']],
		['={{ $json["1"] }}', ['1']],
		['={{ $json.größe }}', ['größe']],
		['={{ $json.名前 }}', ['名前']],
		['={{ $json["名 前"] }}', ['名 前']],
		['={{ $json.$id }}', ['$id']],
		['={{ $json._id }}', ['_id']],
		['={{ $json.class }}', ['class']],
	])('%s reads %j', (raw, path) => {
		expect(itemPathOf(raw)).toEqual(path);
	});

	it.each([
		['no expression', '$json.url'],
		['no equals sign', '{{ $json.url }}'],
		['text before', '=photo {{ $json.url }}'],
		['text after', '={{ $json.url }}.jpg'],
		['space after the braces', '={{ $json.url }} '],
		['two expressions', '={{ $json.a }}{{ $json.b }}'],
		['the whole item', '={{ $json }}'],
		['a method', '={{ $json.url.trim() }}'],
		['an operator', '={{ $json.url + "" }}'],
		['a default', '={{ $json.url ?? "" }}'],
		['optional chaining', '={{ $json?.url }}'],
		['spaces inside the path', '={{ $json . url }}'],
		['a numeric index', '={{ $json.list[0] }}'],
		['a computed key', '={{ $json[key] }}'],
		['an escape in a key', '={{ $json["a\\"b"] }}'],
		['braces in a key', '={{ $json["}}"] }}'],
		['a line break in a key', '={{ $json["a\nb"] }}'],
		['a key that is not an identifier', '={{ $json.a-b }}'],
		['a leading digit', '={{ $json.1a }}'],
		['another node', "={{ $('Start').item.json.url }}"],
		['$input', '={{ $input.item.json.url }}'],
		['$item', '={{ $item(0).$json.url }}'],
		['$itemIndex', '={{ $itemIndex }}'],
		['$binary', '={{ $binary.data.fileName }}'],
		['the constructor', '={{ $json.constructor }}'],
		['the prototype', '={{ $json["__proto__"] }}'],
		['a prototype name deeper', '={{ $json.a.prototype }}'],
		['not a string', 42],
		['a collection', { url: '={{ $json.url }}' }],
	])('refuses %s', (_, raw) => {
		expect(itemPathOf(raw)).toBeUndefined();
	});
});

describe('what the path reads skips', () => {
	it('no parameter of the node asks n8n to validate its type, which a value read directly skips', () => {
		const { properties } = new ProductDataIntegration().description;
		expect(JSON.stringify(properties)).not.toContain('"validateType"');
	});
});
