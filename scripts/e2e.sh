#!/usr/bin/env bash
# `npm run test:e2e`: the end-to-end suite (test/e2e) in a real n8n. Builds the package from clean,
# packs it as it would be published and hands the tarball to the suite, which installs it into n8n
# the way a user does. Arguments go on to jest, e.g. one file: `npm run test:e2e -- test/e2e/harness.test.ts`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
cd "$PROJECT_ROOT"

pack_dir="$(mktemp -d)"
trap 'rm -rf "$pack_dir"' EXIT

# From clean, so that no file left over from an older build lands in the tarball.
rm -rf dist
npm run build
npm pack --pack-destination "$pack_dir" --silent >/dev/null
tarballs=("$pack_dir"/*.tgz)
[ -f "${tarballs[0]}" ] || {
	echo "npm pack produced no tarball" >&2
	exit 1
}

E2E_PACKAGE_TGZ="${tarballs[0]}" npx jest --config test/e2e/jest.config.js --ci "$@"
