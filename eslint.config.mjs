// One lint stack over the whole tree, built the way n8n's node tooling (@n8n/node-cli) builds its
// ESLint 9 configuration: ESLint's and typescript-eslint's recommended rules everywhere, n8n's
// community-package rules and eslint-plugin-n8n-nodes-base on the package's own code. The
// community rules are the ones for packages outside n8n Cloud here: the full edition keeps a Redis
// client and reads the process's environment (scripts/community-lint.mjs lists why); the verified
// edition is linted with the Cloud rules by `npm run lint:verified`. Formatting is Prettier's
// (.prettierrc.js), checked by `npm run lint` and applied by `npm run format`.
//
// @n8n/node-cli also resolves imports with eslint-plugin-import-x; its resolver is a native module
// whose platform packages the registry this project installs from does not all have, so TypeScript's
// own checks (`npm run typecheck`, noUnused*, strict) stand in for it.
import js from '@eslint/js';
import { n8nCommunityNodesPlugin } from '@n8n/eslint-plugin-community-nodes';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import { globalIgnores } from 'eslint/config';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const PACKAGE_CODE = ['nodes/**/*.ts', 'credentials/**/*.ts'];

export default tseslint.config(
	globalIgnores([
		'**/node_modules',
		'dist',
		'verified',
		'coverage',
		'**/.n8n',
		'scripts/n8n-host*',
	]),
	{
		files: ['**/*.ts', '**/*.js', '**/*.mjs'],
		extends: [js.configs.recommended, tseslint.configs.recommended],
		languageOptions: { globals: globals.node },
		rules: {
			'prefer-spread': 'off',
		},
	},
	{
		files: ['**/*.js'],
		languageOptions: { sourceType: 'commonjs' },
		rules: { '@typescript-eslint/no-require-imports': 'off' },
	},
	{
		files: PACKAGE_CODE,
		extends: [n8nCommunityNodesPlugin.configs.recommendedWithoutN8nCloudSupport],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: { 'no-console': 'error' },
	},
	{
		files: ['package.json'],
		extends: [n8nCommunityNodesPlugin.configs.recommendedWithoutN8nCloudSupport],
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		languageOptions: { parser: tseslint.parser, parserOptions: { extraFileExtensions: ['.json'] } },
		rules: {
			...n8nNodesBase.configs.community.rules,
			// The package's name is its own, not the starter's default.
			'n8n-nodes-base/community-package-json-name-still-default': 'off',
			// The full edition's runtime dependencies (ioredis, form-data) are exceptions to n8n's gate
			// that scripts/community-lint.mjs keeps, each with its reason, and checks against the gate itself.
			'@n8n/community-nodes/no-runtime-dependencies': 'off',
		},
	},
	{
		files: ['credentials/**/*.ts'],
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// The rule expects a slug of n8n's own docs; a community package links its own README.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// These older rules want the literal 'main'; n8n's community-package rules want
			// NodeConnectionTypes.Main (node-connection-type-literal), which n8n 2.x nodes use.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
);
