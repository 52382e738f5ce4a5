#!/usr/bin/env bash
# One tier of the in-process tests, jest on Node 24 (n8n-core needs it) with the project's
# dependencies and Redis in place:
#   bash scripts/jest.sh unit [jest arguments]          pure tests of the package: no server, no n8n engine (npm run test:unit)
#   bash scripts/jest.sh integration [jest arguments]   the package in n8n-core's engine against the emulator and a real Redis (npm run test:integration)
#   bash scripts/jest.sh tools [jest arguments]         the project's tools: the emulator, the n8n drivers, the toolchain, the packed package (npm run test:tools)
# e.g. one file: `npm run test:integration -- test/integration/document.test.ts`, one test: `-- -t 'name'`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
cd "$PROJECT_ROOT"
tier="${1:-}"
shift || true
case "$tier" in
unit) ;;
integration | tools) ensure_test_servers ;;
*)
	echo "usage: bash scripts/jest.sh unit|integration|tools [jest arguments]" >&2
	exit 2
	;;
esac
# The tier's folder last: --roots is a list option, and would take the test files that followed it.
exec npx jest "$@" --roots "<rootDir>/test/$tier"
