#!/usr/bin/env bash
# `npm start`: Node 24, the project's dependencies and redis-server in place, then the demo (scripts/start.ts).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
ensure_redis_server
cd "$PROJECT_ROOT"
exec node --import tsx "$PROJECT_ROOT/scripts/start.ts" "$@"
