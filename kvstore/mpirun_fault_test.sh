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
# its output has a line matching every pattern (none, for a pattern
# written !PATTERN).
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
    if [ "${pattern:0:1}" = "!" ]; then
      if grep -qE "${pattern:1}" <<<"$out"; then
        echo "FAIL: mode $mode: a line matches '${pattern:1}'"; failed=1
      fi
    elif ! grep -qE "$pattern" <<<"$out"; then
      echo "FAIL: mode $mode: no line matching '$pattern'"; failed=1
    fi
  done
}

# mpirun names the rank that exited and ends the others.
expect exit 60 "rank 1: exiting with code 3" 'Process name: \[\[[0-9]+,1\],1\]'
# The waiting ranks fail with the store's timeout error, naming the rank
# that never reported waiting; that rank, back in the store, fails naming
# the ranks that gave up.
# (A rank whose peer's notice arrives before its own timeout says that
# peer gave up waiting; both forms name rank 1.)
expect stall 60 \
  "rank 0: error: .*(did not complete within 3 s|rank\(s\) 2 gave up waiting after 3 s).*rank\(s\) 1 never reported waiting" \
  "rank 2: error: .*(did not complete within 3 s|rank\(s\) 0 gave up waiting after 3 s).*rank\(s\) 1 never reported waiting" \
  "rank 1: back: .*cannot complete: rank\(s\) 0, 2 gave up waiting after 3 s"
# KVStore::Abort on rank 1, idle or while its own reduction waits: the
# others fail naming it and its reason, not by the timeout; rank 1's own
# pending reduction fails with its abort.
expect abort 60 "rank 1: aborted" \
  "rank 0: error: .*cannot complete: rank 1 failed: gave up on purpose" \
  "rank 2: error: .*cannot complete: rank 1 failed: gave up on purpose" \
  "!did not complete within"
expect abort_waiting 60 \
  "rank 1: own reduction: .*rank 1 aborted: gave up while waiting" \
  "rank 0: error: .*cannot complete: rank 1 failed: gave up while waiting" \
  "rank 2: error: .*cannot complete: rank 1 failed: gave up while waiting" \
  "!did not complete within"
rm -rf "$MPI_TMP"
[ "$failed" -eq 0 ] && echo "PASSED" || exit 1
