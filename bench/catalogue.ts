import { once } from 'node:events';
import { createWriteStream } from 'node:fs';

/**
 * Writes a well-formed product catalogue of about `targetBytes` (with entities, CDATA and non-ASCII
 * text, so the well-formedness check has real work) and returns its exact size.
 */
export async function writeCatalogue(path: string, targetBytes: number): Promise<number> {
	const out = createWriteStream(path);
	let written = 0;
	const write = async (text: string) => {
		written += Buffer.byteLength(text);
		if (!out.write(text)) await once(out, 'drain');
	};
	await write('<?xml version="1.0" encoding="UTF-8"?>\n<Products>\n');
	for (let index = 0; written < targetBytes; index++) {
		await write(
			`\t<Product id="${index}">\n\t\t<Sku>SKU-${index}</Sku>\n\t\t<Name>Product ${index} &amp; accessories, æøå</Name>\n` +
				`\t\t<Description><![CDATA[Text with <b>markup</b> for product ${index}]]></Description>\n\t</Product>\n`,
		);
	}
	await write('</Products>\n');
	out.end();
	await once(out, 'finish');
	return written;
}
