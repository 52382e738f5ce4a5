#!/usr/bin/env bash
# `npm test`: everything that proves the package, from a fresh clone: lint, strict type-check,
# build, n8n's community-package lint, unit and emulator tests, then the end-to-end suite in a real n8n.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
ensure_redis
cd "$PROJECT_ROOT"

results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT

npm run lint
npm run typecheck
npm run build
# n8n's own gate for community packages: over the source and the packed build
npm run lint:community
npx jest --ci --json --outputFile="$results/unit.json"
if [ "${SKIP_E2E:-}" = "1" ]; then
  echo "SKIP_E2E=1: end-to-end suite not run" >&2
else
  bash scripts/e2e.sh --json --outputFile="$results/e2e.json"
fi

# One closing line for both suites (jest prints a summary per run).
node -e '
  let passed = 0, failed = 0;
  for (const file of process.argv.slice(1)) {
    const run = require(file);
    passed += run.numPassedTests;
    failed += run.numFailedTests;
  }
  console.log(`tests: ${passed} passed, ${failed} failed`);
' "$results"/*.json
