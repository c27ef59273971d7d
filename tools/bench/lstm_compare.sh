#!/usr/bin/env bash
# mxcore's LSTM (nn::LSTM over the fused RNN op, built-in CPU kernels) and
# LibTorch 1.13's at its best, side by side in one run: a 2-layer LSTM,
# T 35, N 32, input and hidden 256, inference and a train step (forward and
# backward) at 1 and 2 threads, ROUNDS rounds (default 3) alternating the
# programs; prints medians and the ratios mxcore/LibTorch.
#   bash tools/bench/lstm_compare.sh [ROUNDS]
# Needs Debian's libtorch-dev (the peer is built into $TMPDIR).
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds="${1:-3}"
tmp="${TMPDIR:-/tmp}"
bazel build --config=opt ${MX_BAZEL_FLAGS:-} //tools:lstm_benchmark
g++ -std=c++17 -O2 tools/bench/lstm_torch_peer.cc \
  -I/usr/include/torch/csrc/api/include -ltorch_cpu -lc10 \
  -o "$tmp/mx_lstm_torch_peer"
source tools/bench/openblas_core.sh
openblas_core "$tmp/mx_lstm_torch_peer"
bench=bazel-bin/tools/lstm_benchmark
out="$tmp/lstm_compare.txt"
: >"$out"
for ((r = 0; r < rounds; ++r)); do
  for t in 1 2; do
    MX_CPU_KERNEL_NTHREADS="$t" "$bench" --benchmark_format=json 2>/dev/null |
      python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    n = b["name"].split("/")[0]
    if n == "BM_LstmInference": print("mxcore", sys.argv[1], "infer_ms", b["real_time"])
    if n == "BM_LstmTrainStep": print("mxcore", sys.argv[1], "train_ms", b["real_time"])
' "$t" >>"$out"
    MALLOC_MMAP_THRESHOLD_=4294967296 MALLOC_TRIM_THRESHOLD_=4294967296 \
      OPENBLAS_NUM_THREADS="$t" "$tmp/mx_lstm_torch_peer" "$t" 2>/dev/null |
      awk -v t="$t" '
        $2 == "lstm_infer_ms" {print "libtorch", t, "infer_ms", $3}
        $2 == "lstm_train_ms" {print "libtorch", t, "train_ms", $3}' >>"$out"
  done
done
python3 tools/bench/medians.py "$out" mxcore libtorch
