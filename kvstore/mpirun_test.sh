#!/usr/bin/env bash
# Runs a program under mpirun on this machine (Bazel starts this script):
#   mpirun_test.sh NP PROGRAM [ARGS...]
# Skips (exit 0, with a line saying why) where Open MPI is not installed.
# Sourced by mpirun_fault_test.sh for mpirun_setup.
set -uo pipefail

# Settings for ranks on one machine, in a container, possibly as root:
# shared memory between ranks (no single-copy mechanism: CMA needs ptrace
# rights a container may lack), no binding to cores (more ranks than
# cores is allowed), and a short session directory under /tmp.
mpirun_setup() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
  export OMPI_MCA_rmaps_base_oversubscribe=1
  export OMPI_MCA_hwloc_base_binding_policy=none
  # Files Bazel gives one test process; the ranks would fight over them.
  unset XML_OUTPUT_FILE TEST_PREMATURE_EXIT_FILE TEST_SHARD_STATUS_FILE
  MPI_TMP=$(mktemp -d /tmp/mxmpi.XXXXXX)
  export OMPI_MCA_orte_tmpdir_base=$MPI_TMP TMPDIR=$MPI_TMP
  # Under ASan: Open MPI keeps allocations to exit in components it has
  # unloaded by then, which LeakSanitizer cannot name or suppress, so the
  # ranks do not check for leaks (kvstore_test does, in one process).
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  np=$1 program=$2
  shift 2
  if ! command -v mpirun >/dev/null 2>&1; then
    echo "SKIPPED: mpirun not found (Open MPI: openmpi-bin, libopenmpi-dev; tools/setup.sh installs them)"
    exit 0
  fi
  mpirun_setup
  # Inside Bazel's 300 s limit for a medium test, so this reports first.
  timeout 280 mpirun -np "$np" "$program" "$@"
  rc=$?
  rm -rf "$MPI_TMP"
  exit $rc
fi
