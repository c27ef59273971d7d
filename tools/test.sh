#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, then `bazel test //...`
# (extra arguments go to bazel, e.g. --config=asan). Ends with the line
# "N passed, M failed", counted from Bazel's per-target results; exits non-zero
# on any failure, build errors included.
set -uo pipefail
cd "$(dirname "$0")/.."

bash tools/setup.sh || exit 1

log=$(mktemp /tmp/mxcore-test.XXXXXX.log)
bazel test //... "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$log")
failed=$(grep -cE '^//[^ ]+ +(\(cached\) )?(FAILED|TIMEOUT|FLAKY|NO STATUS|INCOMPLETE|FAILED TO BUILD)' "$log")
# A build error can stop Bazel before it prints any per-target line.
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
rm -f "$log"
echo "$passed passed, $failed failed"
exit "$rc"
