/** @type {import('jest').Config} */
module.exports = {
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	// the end-to-end suite drives a real n8n and has its own config (test/e2e/jest.config.js)
	testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/e2e/'],
	// Code the benchmarks run with tsx imports a node as X.node.js (tsx would take X.node for the
	// codex file X.node.json): jest finds X.node.ts.
	// The edition the node files install as they load, for tests that use the house without them.
	setupFiles: ['<rootDir>/test/helpers/edition.ts'],
	moduleNameMapper: { '^(\\.{1,2}/.*\\.node)\\.js$': '$1' },
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
	},
};
