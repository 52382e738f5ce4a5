# Sourced by the other scripts: puts Node 24 first on PATH (n8n 2.x and n8n-core need it; the
# published package itself stays loadable on Node 20) and installs the project's dependencies.
# The machine's own Node is used when it is Node 24; otherwise the build of Node 24 for this
# platform comes from the npm registry (scripts/node-build.js decides) into a per-user cache keyed
# by version, so a second run reuses it. Only POSIX tools and Node: it runs on Linux and macOS.
PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-product-data-integration"

# sha1_of <file>...: the SHA-1 (hex) of the files' contents, or of stdin without files.
sha1_of() {
  node -e '
    const hash = require("node:crypto").createHash("sha1");
    const files = process.argv.slice(1);
    if (files.length === 0) files.push(0);
    for (const file of files) hash.update(require("node:fs").readFileSync(file));
    console.log(hash.digest("hex"));
  ' "$@"
}

# ensure_node: sets NODE_DIR (the folder of Node 24's bin/ and include/) and puts its bin first on PATH.
ensure_node() {
  if ! command -v node >/dev/null; then
    echo "Node.js (version 20 or newer, with npm) is needed to start: see https://nodejs.org" >&2
    return 1
  fi
  local choice kind name version
  choice="$(node "$PROJECT_ROOT/scripts/node-build.js")" || return 1
  read -r kind name version <<<"$choice"
  if [ "$kind" = own ]; then
    NODE_DIR="$(cd "$(dirname "$(node -p 'process.execPath')")/.." && pwd)"
  else
    local home="$CACHE_ROOT/node-$version"
    NODE_DIR="$home/node_modules/$name"
    if [ ! -x "$NODE_DIR/bin/node" ]; then
      echo "Installing Node $version ($name) into $home" >&2
      mkdir -p "$home"
      [ -f "$home/package.json" ] || echo '{"private":true}' >"$home/package.json"
      (cd "$home" && npm install --no-save --no-audit --no-fund "$name@$version" >&2) || return 1
    fi
  fi
  export NODE_DIR
  export PATH="$NODE_DIR/bin:$PATH"
}

ensure_dependencies() {
  local stamp="$PROJECT_ROOT/node_modules/.install-stamp"
  local want
  want="$(node --version) $(sha1_of "$PROJECT_ROOT/package-lock.json")"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    (cd "$PROJECT_ROOT" && npm ci --no-audit --no-fund >&2)
    echo "$want" >"$stamp"
  fi
}

ensure_node || return 1

# has_postgres: PostgreSQL's server programs, on PATH or where Debian keeps them, off PATH
# (/usr/lib/postgresql/<version>/bin; scripts/postgres.ts finds them there).
has_postgres() {
  command -v initdb >/dev/null && return
  local initdb
  for initdb in /usr/lib/postgresql/*/bin/initdb; do
    if [ -x "$initdb" ]; then return; fi
  done
  return 1
}

# ensure_commands <package>...: each package's command on PATH (postgresql: its server programs),
# installed with apt-get where it is missing (each is its Debian package's name). Installing must
# not leave a system service running (Redis, the proxy, PostgreSQL): service starts are refused
# while apt-get runs.
ensure_commands() {
  local missing=() command
  for command in "$@"; do
    if [ "$command" = postgresql ]; then has_postgres && continue; fi
    command -v "$command" >/dev/null || missing+=("$command")
  done
  if [ "${#missing[@]}" -eq 0 ]; then return; fi
  if ! command -v apt-get >/dev/null; then
    echo "${missing[*]} must be on PATH: install them (e.g. \`brew install ${missing[*]/redis-server/redis}\` on macOS; PostgreSQL's bin folder on PATH) and run again." >&2
    return 1
  fi
  echo "Installing ${missing[*]} (apt-get)" >&2
  local policy=/usr/sbin/policy-rc.d own_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
  fi
  local status=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >&2 || status=$?
  if [ -n "$own_policy" ]; then rm -f "$policy"; fi
  return "$status"
}

# ensure_test_servers: Debian's redis-server (and openssl, for its TLS certificates), which the tests and
# benchmarks of the shared rate limit start on ports of their own, tinyproxy, the proxy the tests of a
# company network start likewise, and postgresql, the database of the end-to-end tests' n8n in queue
# mode, a server of their own too.
ensure_test_servers() {
  ensure_commands redis-server openssl tinyproxy postgresql
}

# ensure_redis_server: the redis-server the demo (`npm start`) and the benchmarks of the nightly
# sync start for Only Changed Products' memory of a catalogue read page by page.
ensure_redis_server() {
  ensure_commands redis-server
}
