#!/usr/bin/env bash
# `bash scripts/run.sh <command> [arguments]`: the command with Node 24 first on PATH and the
# project's dependencies in place (scripts/toolchain.sh), from the project's folder: the npm scripts
# that run a tool of the project go through it, so each works on a fresh clone as written.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
cd "$PROJECT_ROOT"
exec "$@"
