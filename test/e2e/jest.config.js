/**
 * End-to-end tests in a real n8n: run through `npm run test:e2e` (scripts/e2e.sh), which builds and
 * packs the package first. One file at a time: every file runs its own n8n processes (about 400 MB
 * each), and an `n8n execute` takes seconds, hence the long timeouts.
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
	maxWorkers: 1,
	testTimeout: 10 * 60 * 1000,
	slowTestThreshold: 60,
};
