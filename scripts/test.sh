#!/usr/bin/env bash
# `npm test`: everything that proves the package, from a fresh clone: lint, strict type-check,
# build, unit and emulator tests, then the end-to-end suite in a real n8n.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
cd "$PROJECT_ROOT"

npm run lint
npm run typecheck
npm run build
npx jest --ci
if [ "${SKIP_E2E:-}" = "1" ]; then
  echo "SKIP_E2E=1: end-to-end suite not run" >&2
else
  bash scripts/e2e.sh
fi
