#!/usr/bin/env bash
# `npm start`: the package in a real n8n next to the emulator of the service, in one command from a
# fresh clone. Builds and packs the package, installs n8n (cached), installs the package into a demo
# n8n user folder the way a user installs a community node, starts the emulator, imports a
# credential for it and the workflows of examples/, starts n8n on 127.0.0.1 and sets up a local
# owner, then stays in the foreground: Ctrl-C stops n8n and the emulator.
#
# The demo folder is kept between runs, so that what is built in the editor survives a restart; the
# package, the credential and the examples are installed again on every start (an example replaces
# its earlier copy). `npm start -- --reset` starts from an empty folder.
#
# Environment: N8N_PORT (default 5678); N8N_DEMO_FOLDER (default: a folder in the per-user cache,
# outside the project, because from inside it the package would load the project's copy of
# n8n-workflow instead of n8n's, which no user's n8n does); the emulator's EMULATOR_* variables
# (scripts/emulator/README.md), e.g. EMULATOR_PORT (8470) or EMULATOR_PROCESSING_MS.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
source "$PROJECT_ROOT/scripts/n8n-env.sh"

reset=false
for arg in "$@"; do
	case "$arg" in
	--reset) reset=true ;;
	*)
		echo "usage: npm start [-- --reset]" >&2
		exit 2
		;;
	esac
done

port="${N8N_PORT:-5678}"
demo="${N8N_DEMO_FOLDER:-$CACHE_ROOT/demo}"
# Local demo values, printed for the user like the emulator's demo account.
owner_email='demo@example.com'
owner_password='Demo-password-1'
tsx="$PROJECT_ROOT/node_modules/.bin/tsx"

say() { printf '==> %s\n' "$*"; }

work="$(mktemp -d)"
n8n_pid=''
emulator_pid=''

# stop_process <pid> <name>: SIGTERM and up to 30 s to exit, then SIGKILL for its whole process
# group (each started with setsid: n8n with its task runner, the emulator under tsx).
stop_process() {
	local pid="$1" name="$2" waited=0
	if kill -0 "$pid" 2>/dev/null; then
		echo "Stopping $name" >&2
		kill -TERM "$pid" 2>/dev/null || true
		while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 150 ]; do
			sleep 0.2
			waited=$((waited + 1))
		done
	fi
	kill -KILL -- "-$pid" 2>/dev/null || true
}

cleanup() {
	local status=$?
	trap - EXIT INT TERM HUP
	if [ -n "$n8n_pid" ]; then stop_process "$n8n_pid" n8n; fi
	if [ -n "$emulator_pid" ]; then stop_process "$emulator_pid" 'the emulator'; fi
	rm -rf "$work"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

# log_tail <file>: the end of a log, to say why a process stopped.
log_tail() {
	echo "--- last lines of $1 ---" >&2
	tail -n 40 "$1" >&2 || true
}

# Fails early and plainly instead of after the build when another program holds the port.
node -e "
const server = require('node:net').createServer();
server.once('error', () => process.exit(1));
server.listen(Number(process.argv[1]), '127.0.0.1', () => server.close());
" "$port" || {
	echo "Port $port on 127.0.0.1 is in use: stop what listens there or choose another with N8N_PORT." >&2
	exit 1
}

say 'Project dependencies'
ensure_dependencies
cd "$PROJECT_ROOT"

say 'Build and pack the package'
rm -rf dist
npm run build --silent
npm pack --pack-destination "$work" --silent >/dev/null
tarballs=("$work"/*.tgz)
[ -f "${tarballs[0]}" ] || {
	echo "npm pack produced no tarball" >&2
	exit 1
}
package_name="$(node -p "require('./package.json').name")"
package_version="$(node -p "require('./package.json').version")"

say 'n8n'
n8n="$(bash "$PROJECT_ROOT/scripts/install-n8n.sh")"
n8n_version="$(node -p "require(process.argv[1]).version" "$(dirname "$(dirname "$n8n")")/n8n/package.json")"

if [ "$reset" = true ] && [ -e "$demo" ]; then
	say "Reset the demo folder $demo"
	rm -rf "$demo"
fi
mkdir -p "$demo"

say "Install $package_name $package_version into $demo/.n8n/nodes"
nodes_dir="$demo/.n8n/nodes"
mkdir -p "$nodes_dir"
[ -f "$nodes_dir/package.json" ] || echo '{"name":"installed-nodes","private":true}' >"$nodes_dir/package.json"
# Kept next to the installed package: its package.json refers to this path on the next start too.
cp "${tarballs[0]}" "$demo/$package_name.tgz"
# The same version number on every build: drop the old copy so npm cannot keep it.
rm -rf "$nodes_dir/node_modules/$package_name"
(cd "$nodes_dir" && npm install --legacy-peer-deps --ignore-scripts --no-audit --no-fund --loglevel=error "$demo/$package_name.tgz")

say 'Start the emulator'
ready_file="$work/emulator.json"
EMULATOR_READY_FILE="$ready_file" setsid "$tsx" scripts/emulator/cli.ts >"$demo/emulator.log" 2>&1 &
emulator_pid=$!
waited=0
until [ -f "$ready_file" ]; do
	if ! kill -0 "$emulator_pid" 2>/dev/null || [ "$waited" -ge 600 ]; then
		echo "The emulator did not start." >&2
		log_tail "$demo/emulator.log"
		exit 1
	fi
	sleep 0.1
	waited=$((waited + 1))
done

n8n_env "$demo" "$port" "$(free_port)"

say 'Import the emulator credential'
"$tsx" scripts/n8n/credential.ts "$ready_file" >"$work/credential.json"
"$n8n" import:credentials --input="$work/credential.json" >"$work/import.log" 2>&1 || {
	log_tail "$work/import.log"
	exit 1
}

shopt -s nullglob
examples=("$PROJECT_ROOT"/examples/*.json)
shopt -u nullglob
published=()
if [ "${#examples[@]}" -gt 0 ]; then
	say "Import ${#examples[@]} example workflow(s) from examples/"
	mkdir -p "$work/examples"
	# An example without an id gets one derived from its file name, so that every start replaces it
	# instead of adding a copy. Those marked "active" are published, as n8n imports all inactive.
	node -e "
const { createHash } = require('node:crypto');
const { readFileSync, writeFileSync } = require('node:fs');
const { basename, join } = require('node:path');
const [out, ...files] = process.argv.slice(1);
for (const file of files) {
	const workflow = JSON.parse(readFileSync(file, 'utf8'));
	workflow.id ??= createHash('sha1').update(basename(file)).digest('hex').slice(0, 16);
	writeFileSync(join(out, basename(file)), JSON.stringify(workflow));
	if (workflow.active === true) console.log(workflow.id);
}
" "$work/examples" "${examples[@]}" >"$work/published.txt"
	mapfile -t published <"$work/published.txt"
	"$n8n" import:workflow --separate --input="$work/examples" >"$work/import.log" 2>&1 || {
		log_tail "$work/import.log"
		exit 1
	}
	# n8n skips a file it cannot read as a workflow with a warning; an example must not go missing.
	grep -q "Successfully imported ${#examples[@]} workflow" "$work/import.log" || {
		echo "n8n did not import every example." >&2
		log_tail "$work/import.log"
		exit 1
	}
	for id in "${published[@]}"; do
		"$n8n" publish:workflow --id="$id" >"$work/import.log" 2>&1 || {
			log_tail "$work/import.log"
			exit 1
		}
	done
fi

say "Start n8n $n8n_version on http://127.0.0.1:$port"
setsid "$n8n" start >"$demo/n8n.log" 2>&1 &
n8n_pid=$!
waited=0
until node -e "
fetch(process.argv[1]).then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1));
" "http://127.0.0.1:$port/healthz/readiness"; do
	if ! kill -0 "$n8n_pid" 2>/dev/null || [ "$waited" -ge 360 ]; then
		echo "n8n did not become ready." >&2
		log_tail "$demo/n8n.log"
		exit 1
	fi
	sleep 0.5
	waited=$((waited + 1))
done

owner="$(node -e "
const [url, email, password] = process.argv.slice(1);
fetch(url + '/rest/owner/setup', {
	method: 'POST',
	headers: { 'content-type': 'application/json' },
	body: JSON.stringify({ email, password, firstName: 'Demo', lastName: 'Owner' }),
}).then(async (response) => {
	const text = await response.text();
	if (response.ok) console.log('created');
	else if (text.includes('already setup')) console.log('kept');
	else { console.error('Owner set-up failed: ' + response.status + ' ' + text); process.exit(1); }
}, (error) => { console.error('Owner set-up failed: ' + error.message); process.exit(1); });
" "http://127.0.0.1:$port" "$owner_email" "$owner_password")"

emulator_urls="$(node -p "const r = require(process.argv[1]); r.productionUrl + ' (production), ' + r.testUrl + ' (development/test)'" "$ready_file")"
emulator_login="$(node -p "const r = require(process.argv[1]); r.username + ' / ' + r.password" "$ready_file")"
credential_name="$(node -p "JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'))[0].name" "$work/credential.json")"
if [ "$owner" = created ]; then
	login="$owner_email / $owner_password"
else
	login="$owner_email / $owner_password (the owner of an earlier start; --reset makes it again)"
fi
cat <<EOF

n8n $n8n_version with $package_name $package_version is ready.
  editor:     http://127.0.0.1:$port
  login:      $login
  emulator:   $emulator_urls
              user $emulator_login, in n8n as the credential "$credential_name"
  workflows:  ${#examples[@]} example(s) from examples/, ${#published[@]} of them published
  demo data:  $demo (n8n.log, emulator.log)
Press Ctrl-C to stop.
EOF

# Polls instead of `wait`, to notice the parent going away too: npm, told to stop with SIGTERM,
# passes it to the shell it runs the script with, which may end without passing it on; n8n would
# be left running.
parent=$PPID
while kill -0 "$n8n_pid" 2>/dev/null; do
	if ! kill -0 "$parent" 2>/dev/null; then
		echo "The process that started the demo is gone: stopping." >&2
		exit 143
	fi
	sleep 1
done
echo "n8n stopped on its own." >&2
log_tail "$demo/n8n.log"
exit 1
