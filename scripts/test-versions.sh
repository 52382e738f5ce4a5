#!/usr/bin/env bash
# `npm run test:versions`: the version matrix on its own (`npm test` runs the same files in each
# version beside its whole suite in the pinned one; each n8n version is a 3 GB install of a few
# minutes the first time, and its run takes minutes). For every n8n version with a
# host folder (scripts/n8n-hosts.sh: the pinned one and each scripts/n8n-host-<version>), or only the
# versions given (`npm run test:versions -- 2.38.4`), it installs that n8n and runs in it the
# end-to-end files that prove the package there: loading and the credential's test request (harness,
# trigger), every operation, the trigger's polls, the node as a tool of the AI Agent. The package is
# built and packed once, so every version runs the same tarball. It ends with a markdown table, one
# row per version, and fails when any version failed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/toolchain.sh"
source "$(dirname "${BASH_SOURCE[0]}")/n8n-hosts.sh"
ensure_dependencies
ensure_test_servers
cd "$PROJECT_ROOT"


versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
	while read -r version; do versions+=("$version"); done < <(matrix_versions)
fi
for version in "${versions[@]}"; do
	n8n_host_folder "$version" >/dev/null
done

results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT

npm run build --silent
npm pack --pack-destination "$results" --silent >/dev/null
tarball="$(ls "$results"/*.tgz)"

status=0
for version in "${versions[@]}"; do
	echo "== n8n $version" >&2
	# Installed before the clock starts: the minutes are the run's, not a first install's.
	bash scripts/install-n8n.sh "$version" >/dev/null
	started=$SECONDS
	# One worker, so one n8n at a time: the minutes of two versions compare, and the machine keeps
	# room for whatever else runs on it.
	N8N_VERSION_UNDER_TEST="$version" E2E_PACKAGE_TGZ="$tarball" \
		npx jest --config test/e2e/jest.config.js --ci --maxWorkers=1 --json --outputFile="$results/$version.json" "${VERSION_MATRIX_FILES[@]}" ||
		status=1
	echo "$version $((SECONDS - started))" >>"$results/seconds"
done

node -e '
	const { existsSync, readFileSync } = require("node:fs");
	const [folder] = process.argv.slice(1);
	console.log("| n8n | passed | failed | minutes |\n|---|---|---|---|");
	for (const line of readFileSync(`${folder}/seconds`, "utf8").trim().split("\n")) {
		const [version, seconds] = line.split(" ");
		const minutes = (Number(seconds) / 60).toFixed(1);
		const file = `${folder}/${version}.json`;
		// No result file: the run ended before any test (its set-up failed, e.g. n8n did not start).
		if (!existsSync(file)) {
			console.log(`| ${version} | 0 | set-up failed | ${minutes} |`);
			continue;
		}
		const run = JSON.parse(readFileSync(file, "utf8"));
		// A file whose set-up failed counts none of its tests: it is named beside the failed tests.
		const broken = run.numRuntimeErrorTestSuites ? ` and ${run.numRuntimeErrorTestSuites} file(s) that did not run` : "";
		console.log(`| ${version} | ${run.numPassedTests} | ${run.numFailedTests}${broken} | ${minutes} |`);
	}
' "$results"
exit "$status"
