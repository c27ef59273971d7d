#!/usr/bin/env bash
# Per-op dispatch of `c = a + b` on 1-element float32 arrays, side by side
# with LibTorch 1.13 in one run, rounds alternating the programs.
#
#   bash tools/bench/dispatch_compare.sh [ROUNDS]
#
# Builds //imperative:imperative_benchmark with --config=opt and the LibTorch
# peer from ../shared/peers/libtorch (needs libtorch-dev). Prints µs per op:
# LibTorch (no grad, 1 thread, malloc pinned as ../shared/peers/README.md
# says), mxcore NaiveEngine, ThreadedEnginePerDevice, and the threaded
# engine with inline execution of small ops turned off.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=${1:-3}
peer=${MX_LIBTORCH_PEER:-/tmp/libtorch_peer_bench}
[ -x "$peer" ] || bash ../shared/peers/libtorch/build.sh "$peer"
bazel build --config=opt ${MX_BAZEL_FLAGS:-} //imperative:imperative_benchmark
bench=bazel-out/k8-opt/bin/imperative/imperative_benchmark
mx() {  # label, then environment assignments
  local label=$1
  shift
  env "$@" "$bench" --benchmark_filter=Dispatch --benchmark_min_time=1 \
      2>/dev/null | awk -v l="$label" '
        # One iteration is 1000 ops; the time column is in the unit after it.
        /^BM_/ { t = $2; u = $3
                 if (u == "ns") t /= 1000; else if (u == "ms") t *= 1000
                 printf "mxcore %s %.3f us/op\n", l, t / 1000 }'
}
for ((r = 1; r <= rounds; ++r)); do
  MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 \
    OPENBLAS_NUM_THREADS=1 "$peer" 1 2>/dev/null | grep per_op_add_1elem_us
  mx NaiveEngine MX_ENGINE_TYPE=NaiveEngine
  mx ThreadedEnginePerDevice MX_ENGINE_TYPE=ThreadedEnginePerDevice
  mx ThreadedEnginePerDevice_no_inline MX_ENGINE_TYPE=ThreadedEnginePerDevice \
     MX_ENGINE_INLINE_BYTES=0
done
