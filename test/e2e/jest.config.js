/**
 * End-to-end tests in a real n8n: run through `npm run test:e2e` (scripts/e2e.sh). The global
 * set-up builds and packs the package and starts an n8n per worker, which the worker's files share
 * one after the other (test/e2e/harness.ts); the workers find theirs through the environment the
 * set-up leaves. Long timeouts: a trigger test waits for a scheduled poll.
 * @type {import('jest').Config}
 */
module.exports = {
	rootDir: '../..',
	preset: 'ts-jest',
	testEnvironment: 'node',
	roots: ['<rootDir>/test/e2e'],
	testMatch: ['**/*.test.ts'],
	transform: {
		'^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
	},
	globalSetup: '<rootDir>/test/e2e/global-setup.ts',
	globalTeardown: '<rootDir>/test/e2e/global-teardown.ts',
	maxWorkers: 2,
	testTimeout: 10 * 60 * 1000,
	slowTestThreshold: 60,
};
