#!/usr/bin/env bash
# The in-process parts of `npm test`: jest on Node 24 (n8n-core needs it) with the project's
# dependencies and Redis (the shared rate limit's tests) in place.
#   bash scripts/jest.sh unit [jest arguments]       the package's and the tools' tests (npm run test:unit)
#   bash scripts/jest.sh emulator [jest arguments]   the emulator's own tests (npm run test:emulator)
# e.g. one file: `npm run test:unit -- test/unit/document.test.ts`, one test: `-- -t 'name'`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
ensure_dependencies
ensure_redis
cd "$PROJECT_ROOT"
part="${1:-}"
shift || true
case "$part" in
unit) others='/test/(e2e|emulator)/' ;;
emulator) others='/test/(e2e|unit|n8n|toolchain)/' ;;
*)
	echo "usage: bash scripts/jest.sh unit|emulator [jest arguments]" >&2
	exit 2
	;;
esac
# After the caller's arguments: jest's list options take every argument that follows them.
exec npx jest "$@" --testPathIgnorePatterns '/node_modules/' "$others"
