#!/usr/bin/env bash
# Adds n8n <version> to the version matrix (`npm run test:versions`): its host folder
# scripts/n8n-host-<version>, holding the pinned host's package.json with that version and the lock
# npm resolves for it from the registry (a few minutes; nothing is installed). Commit the folder.
# It fails when the registry lacks a package that n8n release needs: such a release cannot be tested
# as released, and any override beyond the pinned host's would make it an n8n nobody runs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"

version="${1:?usage: bash scripts/add-n8n-version.sh <n8n version>}"
folder="$PROJECT_ROOT/scripts/n8n-host-$version"
if [ -e "$folder" ]; then
	echo "scripts/n8n-host-$version exists already" >&2
	exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
node -e '
	const [pinnedManifest, version] = process.argv.slice(1);
	const manifest = require(pinnedManifest);
	manifest.description = `n8n ${version}, one of the versions the package is tested in (npm run test:versions).`;
	manifest.dependencies = { n8n: version };
	console.log(JSON.stringify(manifest, null, "\t"));
' "$PROJECT_ROOT/scripts/n8n-host/package.json" "$version" >"$work/package.json"
(cd "$work" && npm install --package-lock-only --ignore-scripts --no-audit --no-fund --loglevel=error >&2)
# A lock written without an install lists some packages as extraneous; npm never installs those, and
# scripts/install-n8n.sh refuses an install that lacks a locked package.
node -e '
	const { readFileSync, writeFileSync } = require("node:fs");
	const [file] = process.argv.slice(1);
	const lock = JSON.parse(readFileSync(file, "utf8"));
	for (const [path, entry] of Object.entries(lock.packages)) if (entry.extraneous) delete lock.packages[path];
	writeFileSync(file, `${JSON.stringify(lock, null, "\t")}\n`);
' "$work/package-lock.json"
mkdir "$folder"
cp "$work/package.json" "$work/package-lock.json" "$folder/"
echo "scripts/n8n-host-$version added: \`npm run test:versions -- $version\` installs and tests it" >&2
