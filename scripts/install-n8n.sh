#!/usr/bin/env bash
# Installs the pinned n8n (scripts/n8n-host/package.json + package-lock.json) into a per-user cache
# and prints the path of its `n8n` executable on stdout; everything else goes to stderr.
# `install-n8n.sh <version>` installs another n8n of the version matrix, from its own host folder
# scripts/n8n-host-<version> (scripts/n8n-hosts.sh).
#
# The cache folder is keyed by the n8n version and a hash of the host manifest, its lock and the Node
# ABI (sqlite3 is compiled against it), so a change of any of them installs next to the old one;
# installs left unused for two weeks are removed (scripts/prune-installs.sh).
# A finished install is marked by a file written last: a folder without it is a half-done install
# (interrupted, out of disk) and is removed and redone. Concurrent callers wait on a lock.
set -euo pipefail

# shellcheck source=toolchain.sh
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
# shellcheck source=prune-installs.sh
source "$(dirname "${BASH_SOURCE[0]}")/prune-installs.sh"
# shellcheck source=n8n-hosts.sh
source "$(dirname "${BASH_SOURCE[0]}")/n8n-hosts.sh"

host_source="$(n8n_host_folder "${1:-}")"
n8n_version="$(pinned_n8n_version "$host_source")"
install_key="$(
	{
		cat "$host_source/package.json" "$host_source/package-lock.json"
		node -p 'process.versions.modules'
	} | sha1_of | cut -c1-12
)"
target="$CACHE_ROOT/n8n-$n8n_version-$install_key"
marker="$target/.install-complete"
n8n_bin="$target/node_modules/.bin/n8n"

if [ -f "$marker" ] && [ -x "$n8n_bin" ]; then
	touch "$marker"
	prune_unused_installs "$CACHE_ROOT" "$target"
	echo "$n8n_bin"
	exit 0
fi

# The lock is a folder (mkdir is atomic everywhere; flock is not on macOS) holding the owner's pid:
# a lock whose owner is gone (killed mid-install) is taken over.
mkdir -p "$CACHE_ROOT"
lock="$target.lock.d"
until mkdir "$lock" 2>/dev/null; do
	owner="$(cat "$lock/pid" 2>/dev/null || true)"
	if [ -n "$owner" ] && ! kill -0 "$owner" 2>/dev/null; then
		echo "Taking over the lock of a stopped n8n install ($owner)" >&2
		rm -rf "$lock"
		continue
	fi
	[ -n "${waiting:-}" ] || echo "Waiting for another install of n8n into $target" >&2
	waiting=1
	sleep 2
done
echo $$ >"$lock/pid"
trap 'rm -rf "$lock"' EXIT

# Another caller may have finished the install while this one waited for the lock.
if [ ! -f "$marker" ] || [ ! -x "$n8n_bin" ]; then
	started=$SECONDS
	if [ -e "$target" ]; then
		echo "Removing an unfinished n8n install in $target" >&2
		rm -rf "$target"
	fi
	echo "Installing n8n $n8n_version into $target (a few minutes, about 3 GB)" >&2
	mkdir -p "$target"
	cp "$host_source/package.json" "$host_source/package-lock.json" "$target/"
	(
		cd "$target"
		# node-gyp compiles sqlite3 against the headers shipped next to the Node 24 binary, not
		# against whatever nodedir the user's npm configuration names; a Node without headers
		# beside it (some system packages) leaves node-gyp to fetch those of its version.
		if [ -f "$NODE_DIR/include/node/node.h" ]; then
			export npm_config_nodedir="$NODE_DIR"
		else
			export npm_config_nodedir=
		fi
		# Some transitive install scripts download from the internet; a failing one makes npm roll
		# back the whole tree, so none runs and the one native module n8n needs is built on its own.
		# `npm ci` refuses this lock: a few platform builds of optional dependencies (macOS and
		# Windows binaries of msgpackr-extract) are missing from the registry at the locked version,
		# so the lock cannot list them. `npm install` from the lock skips them as optional; the
		# check below proves it installed exactly the locked tree.
		npm install --no-save --ignore-scripts --no-audit --no-fund --loglevel=error >&2
		node - <<-'CHECK' >&2
			// Every installed package is the locked version; every locked package that is not
			// optional (platform builds for other systems) is installed.
			const locked = require('./package-lock.json').packages;
			const installed = require('./node_modules/.package-lock.json').packages;
			const wrong = [];
			for (const [path, entry] of Object.entries(installed)) {
				if (locked[path]?.version !== entry.version) wrong.push(`${path}@${entry.version} not locked`);
			}
			for (const [path, entry] of Object.entries(locked)) {
				if (path && !entry.optional && !installed[path]) wrong.push(`${path}@${entry.version} not installed`);
			}
			if (wrong.length) {
				console.error(`The n8n install differs from its lock:\n${wrong.join('\n')}`);
				process.exit(1);
			}
			console.error(`Installed tree matches the lock (${Object.keys(installed).length} packages)`);
		CHECK
		# sqlite3's install script tries a prebuilt binary download first; go straight to the build.
		npm_config_build_from_source=true npm rebuild sqlite3 --ignore-scripts=false --loglevel=error >&2
		node -e 'require("sqlite3")' >&2
	)
	[ -x "$n8n_bin" ] || {
		echo "n8n executable missing after install: $n8n_bin" >&2
		exit 1
	}
	printf 'n8n %s\nnode %s\n' "$n8n_version" "$(node --version)" >"$marker"
	echo "n8n $n8n_version installed in $((SECONDS - started)) s" >&2
fi
prune_unused_installs "$CACHE_ROOT" "$target"

echo "$n8n_bin"
