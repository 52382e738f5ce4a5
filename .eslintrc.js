/** @type {import('@types/eslint').ESLint.ConfigData} */
module.exports = {
	root: true,
	env: { browser: false, es6: true, node: true },
	parser: '@typescript-eslint/parser',
	parserOptions: {
		project: ['./tsconfig.json'],
		sourceType: 'module',
		extraFileExtensions: ['.json'],
	},
	ignorePatterns: ['.eslintrc.js', '**/*.js', '**/node_modules/**', '**/dist/**'],
	overrides: [
		{
			files: ['package.json'],
			// package.json is no part of the TypeScript program (it would be copied into the build)
			parserOptions: { project: null },
			plugins: ['eslint-plugin-n8n-nodes-base'],
			extends: ['plugin:n8n-nodes-base/community'],
			rules: {
				'n8n-nodes-base/community-package-json-name-still-default': 'off',
			},
		},
		{
			// The verified edition's modules are built by scripts/verified.mjs, not by tsconfig.json.
			files: ['**/*.verified.ts'],
			parserOptions: { project: ['./tsconfig.test.json'] },
		},
		{
			files: ['./credentials/**/*.ts'],
			plugins: ['eslint-plugin-n8n-nodes-base'],
			extends: ['plugin:n8n-nodes-base/credentials'],
			rules: {
				// the rule expects a slug of n8n's own docs; a community package links its own README
				'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
			},
		},
		{
			files: ['./nodes/**/*.ts'],
			plugins: ['eslint-plugin-n8n-nodes-base'],
			extends: ['plugin:n8n-nodes-base/nodes'],
			rules: {
				// These older rules want the literal 'main'; n8n's community-package gate wants
				// NodeConnectionTypes.Main (node-connection-type-literal), which n8n 2.x nodes use.
				'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
				'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
			},
		},
	],
};
