#!/usr/bin/env bash
# `npm run test:e2e`: the end-to-end suite (test/e2e) in a real n8n; its global set-up builds and
# packs the package and installs the tarball into n8n the way a user does. Arguments go on to jest,
# e.g. one file: `npm run test:e2e -- test/e2e/harness.test.ts`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
ensure_test_servers
cd "$PROJECT_ROOT"
npx jest --config test/e2e/jest.config.js --ci "$@"
