#!/usr/bin/env bash
# A rank that exits or stops calling the store makes the whole job fail in
# bounded time with an error naming what happened (dist_fault_test.cc):
#   mpirun_fault_test.sh PROGRAM
set -uo pipefail
program=$1
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIPPED: mpirun not found (Open MPI: openmpi-bin, libopenmpi-dev; tools/setup.sh installs them)"
  exit 0
fi
source "$(dirname "$0")/mpirun_test.sh"
mpirun_setup
failed=0

# expect MODE MAX_SECONDS PATTERN...: mpirun fails within MAX_SECONDS and
# its output has every pattern.
expect() {
  local mode=$1 max=$2 start elapsed rc out
  shift 2
  start=$(date +%s)
  out=$(MX_KVSTORE_TIMEOUT=3 timeout 120 mpirun -np 3 "$program" "$mode" 2>&1)
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  echo "--- mode $mode: mpirun exit $rc after ${elapsed}s; output:"
  echo "$out"
  if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
    echo "FAIL: mode $mode: expected a failed job, got exit $rc"; failed=1
  fi
  if [ "$elapsed" -gt "$max" ]; then
    echo "FAIL: mode $mode: took ${elapsed}s (bound ${max}s)"; failed=1
  fi
  for pattern in "$@"; do
    if ! grep -qE "$pattern" <<<"$out"; then
      echo "FAIL: mode $mode: no line matching '$pattern'"; failed=1
    fi
  done
}

# mpirun names the rank that exited and ends the others.
expect exit 60 "rank 1: exiting with code 3" 'Process name: \[\[[0-9]+,1\],1\]'
# The waiting ranks fail with the store's timeout error, naming the rank
# that never reported waiting.
expect stall 60 \
  "rank 0: error: .*did not complete within 3 s.*rank\(s\) 1 never reported waiting.*rank\(s\) 2 timed out too" \
  "rank 2: error: .*did not complete within 3 s.*rank\(s\) 1 never reported waiting.*rank\(s\) 0 timed out too"
# KVStore::Abort on rank 1: the others fail naming it and its reason, well
# before the 3 s timeout would have (no timeout message).
expect abort 60 "rank 1: aborted" \
  "rank 0: error: .*cannot complete: rank 1 failed: gave up on purpose" \
  "rank 2: error: .*cannot complete: rank 1 failed: gave up on purpose"
rm -rf "$MPI_TMP"
[ "$failed" -eq 0 ] && echo "PASSED" || exit 1
