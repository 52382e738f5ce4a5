#!/usr/bin/env bash
# `npm run lint:verified`: n8n's node tooling (@n8n/node-cli, pinned here) lints the verified edition
# with its Cloud-support rules (scripts/lint-verified.mjs). It is installed into the per-user cache on
# first use rather than as a dependency of the project: its ESLint plugins bring a native resolver
# with one optional package per platform, which the registry the tests install from does not all
# have, so the project's lock file could not hold them and `npm ci` would refuse it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
NODE_CLI_VERSION=0.48.3
home="$CACHE_ROOT/node-cli-$NODE_CLI_VERSION"
if [ ! -f "$home/.install-complete" ]; then
	echo "Installing @n8n/node-cli $NODE_CLI_VERSION into $home" >&2
	rm -rf "$home"
	mkdir -p "$home"
	echo '{"private":true}' >"$home/package.json"
	(cd "$home" && npm install --no-save --ignore-scripts --no-audit --no-fund "@n8n/node-cli@$NODE_CLI_VERSION" >&2)
	touch "$home/.install-complete"
fi
NODE_CLI_HOME="$home" exec node "$PROJECT_ROOT/scripts/lint-verified.mjs"
