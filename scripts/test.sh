#!/usr/bin/env bash
# `npm test`: everything that proves the package, from a fresh clone: lint, strict type-check, one
# build and pack of each edition (full, verified), n8n's community-package lint of each edition's
# source and tarball, then the test tiers: unit, integration, tools, and the end-to-end suite in a
# real n8n with the full edition's tarball installed, its operation, trigger, AI Agent and Only
# Changed Products files again with the verified edition's, and the files of the version matrix
# (scripts/test-versions.sh) in every other n8n version the README promises (the oldest).
# A failing tier does not stop the tiers after it. The last line, also when a step fails, is
# `N passed, N failed, N skipped` over every tier (scripts/test-summary.js); a tier that left no
# results counts as failed and is named above it, and then the exit code is not zero.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
source "$(dirname "${BASH_SOURCE[0]}")/n8n-hosts.sh"
ensure_dependencies
ensure_test_servers
cd "$PROJECT_ROOT"

results="$(mktemp -d)"
# Background installs still running, each the leader of its own process group.
installs=()
# The jest tiers, each `<name>:<jest's exit code, - until it ran>:<its results file>`: what the
# closing line sums.
tiers=()
finish() {
  local status=$?
  # A run that stops early stops the installs too, npm included (a half-done install is redone by
  # the next run).
  local install
  for install in ${installs[@]+"${installs[@]}"}; do
    kill -TERM -- "-$install" 2>/dev/null || true
  done
  node scripts/test-summary.js ${tiers[@]+"${tiers[@]}"} || status=1
  rm -rf "$results"
  exit "$status"
}
trap finish EXIT

# plan_tier <name>: a tier this run is to run; until it has, the closing line counts it as failed.
plan_tier() {
  tiers+=("$1:-:$results/$1.json")
}

# run_tier <name> <command>...: runs a tier's jest, which is to write its results to
# $results/<name>.json (--json --outputFile); a failing tier does not stop the run.
run_tier() {
  local name="$1" status=0 index
  shift
  "$@" || status=$?
  for index in "${!tiers[@]}"; do
    case "${tiers[$index]}" in "$name:"*) tiers[$index]="$name:$status:$results/$name.json" ;; esac
  done
}

# in_background <log> <command>...: starts the command in a process group of its own (job control
# on just for it) with its output in <log>; its pid is in $started.
in_background() {
  local log="$1"
  shift
  set -m
  "$@" >"$log" 2>&1 &
  started=$!
  set +m
  installs+=("$started")
}

# await_install <pid> <log>: waits for a background install, which then no longer needs stopping;
# on failure prints its log and fails.
await_install() {
  local status=0 install remaining=()
  wait "$1" || status=$?
  for install in ${installs[@]+"${installs[@]}"}; do
    [ "$install" = "$1" ] || remaining+=("$install")
  done
  installs=(${remaining[@]+"${remaining[@]}"})
  if [ "$status" -ne 0 ]; then
    echo "Installing n8n failed:" >&2
    cat "$2" >&2
    return 1
  fi
}

# install_other_versions: installs every version of the matrix but the pinned one, one after another.
install_other_versions() {
  local version
  for version in ${other_versions[@]+"${other_versions[@]}"}; do
    bash scripts/install-n8n.sh "$version" || return 1
  done
}

# The pinned n8n installs (minutes on a fresh machine, mostly waiting on the registry) while the
# steps before the end-to-end suite run; the suite's own call of the same script then finds it done.
# The other versions of the matrix install beside it, each the next after the last, for their run
# after the suite.
other_versions=()
while read -r version; do other_versions+=("$version"); done < <(matrix_versions | tail -n +2)
plan_tier unit
plan_tier integration
plan_tier tools
if [ "${SKIP_E2E:-}" != "1" ]; then
  plan_tier e2e
  plan_tier e2e-verified
  for version in ${other_versions[@]+"${other_versions[@]}"}; do plan_tier "e2e-n8n-$version"; done
  in_background "$results/n8n-install.log" bash scripts/install-n8n.sh
  pinned_install=$started
  in_background "$results/n8n-versions-install.log" install_other_versions
  versions_install=$started
fi

npm run lint
npm run typecheck
npm run build
mkdir "$results/pack"
npm pack --ignore-scripts --silent --pack-destination "$results/pack" >/dev/null
# Every later step that needs the package takes this tarball instead of building its own.
E2E_PACKAGE_TGZ="$(ls "$results"/pack/*.tgz)"
export E2E_PACKAGE_TGZ
E2E_VERIFIED_TGZ="$(node scripts/verified.mjs pack "$results/pack" | tail -n 1)"
export E2E_VERIFIED_TGZ
npm run lint:community
# n8n's own node tooling on the verified edition: its Cloud-support lint, as `n8n-node lint` runs it.
npm run lint:verified
npm run lint:workflows
for tier in unit integration tools; do
  run_tier "$tier" npx jest --ci --json --outputFile="$results/$tier.json" --roots "<rootDir>/test/$tier"
done
if [ "${SKIP_E2E:-}" = "1" ]; then
  echo "SKIP_E2E=1: end-to-end suite not run" >&2
else
  await_install "$pinned_install" "$results/n8n-install.log"
  run_tier e2e bash scripts/e2e.sh --json --outputFile="$results/e2e.json"
  # The verified edition installed as a user installs it: its operations, trigger, AI Agent tool and
  # Only Changed Products across a restart.
  run_tier e2e-verified env E2E_EDITION=verified bash scripts/e2e.sh --json \
    --outputFile="$results/e2e-verified.json" 'test/e2e/(operations|trigger|agent|changedProducts)\.test\.ts$'
  await_install "$versions_install" "$results/n8n-versions-install.log"
  for version in ${other_versions[@]+"${other_versions[@]}"}; do
    run_tier "e2e-n8n-$version" env N8N_VERSION_UNDER_TEST="$version" bash scripts/e2e.sh --json \
      --outputFile="$results/e2e-n8n-$version.json" "${VERSION_MATRIX_FILES[@]}"
  done
fi
# The closing lines come from finish(), on the way out.
