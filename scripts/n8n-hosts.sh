# Sourced by install-n8n.sh and test-versions.sh: the n8n versions the package is tested in. Each has a
# host folder, a package.json pinning that n8n and the package-lock.json that makes its install
# reproducible: scripts/n8n-host for the pinned version (`npm test`, `npm start`), and
# scripts/n8n-host-<version> for every other version of the version matrix (`npm run test:versions`;
# `bash scripts/add-n8n-version.sh <version>` writes a new one).

N8N_HOSTS_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The end-to-end files that prove the package in an n8n version: loading and the credential's test
# request (harness, trigger), every operation, the trigger's polls, the node as a tool of the AI Agent.
VERSION_MATRIX_FILES=(test/e2e/harness.test.ts test/e2e/operations.test.ts test/e2e/trigger.test.ts test/e2e/agent.test.ts)

# pinned_n8n_version <host folder>: the n8n version its package.json pins.
pinned_n8n_version() {
	node -p "require(process.argv[1]).dependencies.n8n" "$1/package.json"
}

# matrix_versions: every version with a host folder, one a line, the pinned one first.
matrix_versions() {
	pinned_n8n_version "$N8N_HOSTS_DIR/n8n-host"
	local folder
	for folder in "$N8N_HOSTS_DIR"/n8n-host-*/; do
		[ -f "$folder/package-lock.json" ] && pinned_n8n_version "${folder%/}"
	done
	return 0
}

# n8n_host_folder [version]: the host folder of that n8n version (the pinned one without a version);
# fails naming the versions that have one.
n8n_host_folder() {
	local version="${1:-}" default="$N8N_HOSTS_DIR/n8n-host"
	if [ -z "$version" ] || [ "$version" = "$(pinned_n8n_version "$default")" ]; then
		echo "$default"
		return
	fi
	local folder="$N8N_HOSTS_DIR/n8n-host-$version"
	if [ ! -f "$folder/package-lock.json" ] || [ "$(pinned_n8n_version "$folder")" != "$version" ]; then
		echo "No host folder pins n8n $version (scripts/n8n-host-$version); the versions with one: $(matrix_versions | tr '\n' ' ')" >&2
		return 1
	fi
	echo "$folder"
}
