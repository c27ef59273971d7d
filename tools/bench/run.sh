#!/usr/bin/env bash
# Runs every benchmark with an optimized build, the imperative ones under both
# the naive and the default engine. Extra arguments go to each benchmark
# binary (e.g. --benchmark_filter=Dispatch).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tools/setup.sh
bazel build --config=opt //engine:engine_benchmark //imperative:imperative_benchmark \
  //autograd:autograd_benchmark
echo "== engine =="
bazel-bin/engine/engine_benchmark "$@"
for engine in NaiveEngine ThreadedEnginePerDevice; do
  echo "== imperative, MX_ENGINE_TYPE=$engine =="
  MX_ENGINE_TYPE=$engine bazel-bin/imperative/imperative_benchmark "$@"
  echo "== autograd, MX_ENGINE_TYPE=$engine =="
  MX_ENGINE_TYPE=$engine bazel-bin/autograd/autograd_benchmark "$@"
done
