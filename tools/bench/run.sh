#!/usr/bin/env bash
# Runs every benchmark with an optimized build; the imperative, autograd and
# train-step ones under both the naive and the default engine. Extra
# arguments go to each benchmark binary (e.g. --benchmark_filter=Dispatch).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/setup.sh
bazel build --config=opt //engine:engine_benchmark \
  //imperative:imperative_benchmark //autograd:autograd_benchmark \
  //tools:train_step_benchmark //subgraph:partition_benchmark \
  //backends/fuse:fuse_benchmark //backends/fuse:libfuse.so \
  //backends/cpu:einsum_benchmark
echo "== engine =="
bazel-bin/engine/engine_benchmark "$@"
for engine in NaiveEngine ThreadedEnginePerDevice; do
  for b in imperative/imperative_benchmark autograd/autograd_benchmark \
           tools/train_step_benchmark; do
    echo "== $b, MX_ENGINE_TYPE=$engine =="
    MX_ENGINE_TYPE=$engine "bazel-bin/$b" "$@"
  done
done
echo "== einsum =="
bazel-bin/backends/cpu/einsum_benchmark "$@"
echo "== partition =="
bazel-bin/subgraph/partition_benchmark "$@"
echo "== fuse plugin =="
MX_PLUGINS=bazel-bin/backends/fuse/libfuse.so \
  bazel-bin/backends/fuse/fuse_benchmark "$@"
